// dwzcommon.h: inline helpers shared by both programs; dwz moves their DIEs
// into the multifile.
struct rec { int *count; int weight; };

static inline int rec_weight(const struct rec *r)
{
	return *r->count * r->weight;
}

static inline int total_weight(const struct rec *rs, int n)
{
	int t = 0;
	for (int i = 0; i < n; i++)
		t += rec_weight(&rs[i]) + i;
	return t;
}
