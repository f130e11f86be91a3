/*
 * arch.c: the table of architectures (arch_find, and the tests' fake ones
 * added by arch_register), and the checks and thread split that every
 * architecture's decoder shares; see arch.h.
 */
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "model.h"

/* Architectures added at run time: the tests' fake ones. */
static const struct arch *registered[8];
static int nregistered;

int arch_register(const struct arch *a)
{
	if (nregistered == (int)(sizeof registered / sizeof registered[0])) {
		err_set("too many architectures");
		return -1;
	}
	registered[nregistered++] = a;
	return 0;
}

int dec_step_check(int nh, int live, const int32_t *prev, int V)
{
	if (nh < 0 || nh > live) {
		err_set("decoder: a step for %d hypotheses, %d live", nh, live);
		return -1;
	}
	for (int i = 0; i < nh; i++)
		if (prev[i] < 0 || prev[i] >= V) {
			err_set("decoder: token %d is outside the target "
				"vocabulary of %d", (int)prev[i], V);
			return -1;
		}
	return 0;
}

int dec_step_block(int nh, int shortlisted)
{
	int nt = kern_threads();

	if (nt < 2 || shortlisted || nh < 16 * nt)
		return 0;
	return (nh + nt - 1) / nt;
}

const struct arch *arch_find(const char *name)
{
	const struct arch *builtin[] = {
		&arch_rnnsearch, &arch_rnnencdec, &arch_seq2seq,
		&arch_transformer,
	};
	size_t i;

	for (i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (strcmp(builtin[i]->name, name) == 0)
			return builtin[i];
	for (i = 0; i < (size_t)nregistered; i++)
		if (strcmp(registered[i]->name, name) == 0)
			return registered[i];
	err_set("unknown architecture '%s'", name);
	return NULL;
}
