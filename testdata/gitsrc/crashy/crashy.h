/* crashy.h: a record table and the functions that read it. */
struct record {
	const char *name;
	int value;
};

int parse_record(const struct record *r);
int run_records(int n);
