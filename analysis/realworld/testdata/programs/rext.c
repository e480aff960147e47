// rext: an R extension (.Call) that reads through a NULL pointer in score.
// R's handler prints "caught segfault" and a traceback, re-raises SIGSEGV
// and returns.
#include <R.h>
#include <Rinternals.h>

struct model {
	double *weights;
	int n;
};

__attribute__((noinline)) static double score(const struct model *m) {
	double s = 0;
	for (int i = 0; i < m->n; i++)
		s += m->weights[i];
	return s;
}

SEXP fit_model(SEXP n) {
	struct model m = {NULL, Rf_asInteger(n)};
	return Rf_ScalarReal(score(&m));
}
