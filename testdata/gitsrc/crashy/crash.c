/* crash.c: record parsing. */
#include <stddef.h>
#include "crashy.h"

/* counting: none */

/* parse_record reads one record's value. */
int parse_record(const struct record *r)
{
	int scale = 1;
	if (scale > 1)
		scale = 1;
	return r->value + records_seen;
}
