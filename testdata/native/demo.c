// demo.c: the bundled demo, a small record loader linked -static (-O2 -g).
// It parses "key=value" records from an embedded config and prints each
// record's timeout; the third record has no timeout, find_field returns
// NULL and the inlined field_value reads NULL->value (address 0x8).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field {
  const char *key;
  const char *value;
  struct field *next;
};

struct record {
  int id;
  struct field *fields;
};

static const char config[] =
    "id=1 name=alpha timeout=30\n"
    "id=2 name=beta timeout=45\n"
    "id=3 name=gamma\n";

static struct field *field_new(char *tok, struct field *next) {
  struct field *f = calloc(1, sizeof *f);
  char *eq = strchr(tok, '=');
  if (eq != NULL)
    *eq++ = '\0';
  f->key = tok;
  f->value = eq != NULL ? eq : "";
  f->next = next;
  return f;
}

static int parse_records(char *text, struct record *out, int max) {
  int n = 0;
  char *save_line = NULL;
  for (char *line = strtok_r(text, "\n", &save_line); line != NULL && n < max;
       line = strtok_r(NULL, "\n", &save_line)) {
    struct record *r = &out[n++];
    char *save_tok = NULL;
    for (char *tok = strtok_r(line, " ", &save_tok); tok != NULL; tok = strtok_r(NULL, " ", &save_tok))
      r->fields = field_new(tok, r->fields);
    r->id = n;
  }
  return n;
}

static inline const struct field *find_field(const struct record *r, const char *key) {
  for (const struct field *f = r->fields; f != NULL; f = f->next)
    if (strcmp(f->key, key) == 0)
      return f;
  return NULL;
}

static inline const char *field_value(const struct field *f) { return f->value; }

__attribute__((noinline)) int record_timeout(const struct record *r) {
  return atoi(field_value(find_field(r, "timeout")));
}

int main(void) {
  char *text = strdup(config);
  struct record records[8] = {0};
  int n = parse_records(text, records, 8);
  for (int i = 0; i < n; i++)
    printf("record %d: timeout %d\n", records[i].id, record_timeout(&records[i]));
  return 0;
}
