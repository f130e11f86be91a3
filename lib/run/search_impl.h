/*
 * search_impl.h: the inside of the search (search.h), shared by its
 * files:
 *
 *   search_opts.c     the decoding settings: the defaults, a model's own
 *   search_beam.c     beam search (greedy with k = 1): the steps, their
 *                     candidates kept, the hypotheses read back
 *   search_greedy.c   a row's best candidate: the step of greedy search
 *   search_select.c   the selection of a step's candidates, the units
 *                     that cannot pass skipped in bulk
 *   search_rules.c    the options that rule candidates out
 *                     (block_repeats, min_len, empty_source, no_unk)
 *   search_force.c    forced decoding: the scores of given target ids
 *   search_deal.c     batches and sentences dealt out to the threads
 *
 * The decoder's rows are the live hypotheses of all sentences, a
 * sentence's rows next to each other and in rank order.  Every step keeps
 * the candidates it selects (token, the row it extends) and, per row, the
 * candidate of the step before that the row continues, so a finished
 * hypothesis is read back from its last candidate.
 *
 * With a shortlist (shortlist.h), row r's log-probabilities are those of
 * its sentence's units only, in ascending order of id: the scans run
 * over them and map their places back to ids, so the order of the scan,
 * and with it every choice, is that of the full vocabulary's.
 */
#ifndef ATTN_SEARCH_IMPL_H
#define ATTN_SEARCH_IMPL_H

#include <stdint.h>
#include "models/shortlist.h"
#include "search.h"

/* One step of the search, kept for reading hypotheses back. */
struct step {
	int nrow;
	int *row_ent;		/* [nrow] the entry of the step before */
	float *att;		/* [nrow, P, smax], or NULL */
	int nent;
	int32_t *tok;		/* [nent] the selected candidates */
	int *row;		/* [nent] the rows they extend */
};

struct fin {
	int t, e;		/* the last candidate: step and entry */
	double score, norm;
};

struct cand {
	double score;
	int row;
	int32_t tok;
};

/* The live hypotheses: the decoder's rows. */
struct rows {
	int *sent, *ent;
	int32_t *prev;
	double *score;
	int *parent;
};

struct beam {
	const struct model *m;
	const struct search_opts *o;
	struct decoder *d;
	int n, k, V, L, H, P, smax, tmax, cap;
	int *slen, *maxlen, *nfin;
	struct fin *fin;	/* [n, k] */
	struct step *steps;	/* [tmax + 1], from 1 */
	struct rows cur, next;
	float *logp, *attw;
	struct cand *cand;	/* [n, k]: a sentence's group's, best first */
	int *glo, *ghi, *got;	/* [n]: the groups of a step, their rows */
	const struct shortlist *sl;	/* the decoder's, or NULL */
};

/* Row r's units: how many (*ids NULL: 0 .. V-1) and which (*ids). */
static inline int row_units(const struct beam *b, int r, const int32_t **ids)
{
	int s;

	if (!b->sl) {
		*ids = NULL;
		return b->V;
	}
	s = b->cur.sent[r];
	*ids = b->sl->ids + b->sl->off[s];
	return b->sl->off[s + 1] - b->sl->off[s];
}

/* The place of unit id among sentence s's log-probabilities (sl NULL:
 * the id itself), or -1 when it has none. */
static inline int place(const struct shortlist *sl, int s, int32_t id)
{
	return sl ? shortlist_find(sl, s, id) : id;
}

/* 1 when parent [n] is 0 .. n-1: no row moves. */
static inline int identity(const int *parent, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (parent[i] != i)
			return 0;
	return 1;
}

/* select_top for one row r and need 1 (search_greedy.c). */
int beam_select_best(const struct beam *b, int r, struct cand *c);
/* The candidates of the groups (sentences) lo .. hi-1 of a step, ctx the
 * beam, on the threads (search_select.c). */
void beam_select_groups(void *ctx, int64_t lo, int64_t hi);
/* The options' rules on step t's log-probabilities, before its
 * selection (search_rules.c). */
void beam_rules(struct beam *b, int t, int nh);

/*
 * Batches dealt out to the threads (search_deal.c).
 *
 * run(args, f, n, out) decodes frames f [n] into out [n] (elements of
 * size bytes), freeing what it made when it fails; drop frees one
 * element, for the parts that succeeded when another failed.
 */
struct deal {
	int (*run)(const void *args, struct frame **f, int n, void *out);
	void (*drop)(void *elem);
	const void *args;
	size_t size;
	struct frame **f;	/* part p's frames at f[start[p]] ... */
	char *out;		/* their elements, in the same order */
	const int *start;	/* [parts + 1] */
	int parts;
	int *failed;		/* [parts] */
	char (*msg)[256];	/* [parts]: err_msg() of a failure */
};

/* Batch b of frames f, f [start[b]] to f [start[b + 1] - 1] (start[0]
 * = 0), into the same places of out; dl's run, drop, args and size set. */
int search_deal(struct deal *dl, struct frame **f, const int *start, int nb,
		void *out);

#endif
