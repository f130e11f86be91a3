/*
 * spm_unigram.c: the unigram model's segmentation, SentencePiece's
 * optimized Viterbi: for each character boundary, in order, every piece
 * that starts there extends the best path that ends there; a piece's
 * score is its own (a user-defined piece's is its length times the
 * highest normal score, or FLT_MIN when none is positive, less 0.1:
 * mostly above any normal piece's), and when no piece covers exactly the
 * one character that starts there, that character is <unk> with the
 * lowest normal score less 10.  Of equal paths the first
 * found stays.  The arithmetic is SentencePiece's, float and double where
 * it has them, so that ties break the same way.
 */
#include "spm_impl.h"
#include "base/errmsg.h"

struct node {
	float score;            /* of the best path ending here */
	int32_t id;
	int32_t start;          /* where its last piece starts; -1: none */
};

int spm_unigram(struct spm *m)
{
	const char *s = m->line.s;
	size_t size = m->line.n, start, pos, mblen;
	const float unk_score = m->min_score - 10.0f;
	const struct spm_edge *e;
	struct node *best;
	int32_t node, id;
	float here;
	int single;

	if (size > INT32_MAX - 1) {
		err_set("line of %zu bytes: too long", size);
		return -1;
	}
	if (!(best = spm_work(m, (size + 1) * sizeof(*best))))
		return -1;
	for (pos = 0; pos <= size; pos++) {
		best[pos].score = 0;
		best[pos].id = -1;
		best[pos].start = -1;
	}
	for (start = 0; start < size; start += mblen) {
		here = best[start].score;
		single = 0;
		mblen = spm_char_len((unsigned char)s[start]);
		if (mblen > size - start)
			mblen = size - start;
		node = 0;
		for (pos = start; pos < size;) {
			if (!(e = spm_trie_edge(&m->trie, node,
						(unsigned char)s[pos++])))
				break;
			node = e->child;
			if ((id = e->value) < 0)
				continue;       /* (unused pieces are not there) */
			{
				size_t length = pos - start;
				struct node *t = &best[pos];
				double cand;

				if (id & SPM_USER_EDGE) {
					id &= ~SPM_USER_EDGE;
					cand = m->node_score[node] + (double)here;
				} else {
					cand = (double)e->score + (double)here;
				}
				if (t->start < 0 || cand > (double)t->score) {
					t->score = (float)cand;
					t->start = (int32_t)start;
					t->id = id;
				}
				if (length == mblen)
					single = 1;
			}
		}
		if (!single) {
			struct node *t = &best[start + mblen];
			float cand = unk_score + here;

			if (t->start < 0 || cand > t->score) {
				t->score = cand;
				t->start = (int32_t)start;
				t->id = m->unk_id;
			}
		}
	}
	/* back from the end, then the tokens reversed into order */
	m->ntok = 0;
	for (pos = size; pos > 0; pos = (size_t)best[pos].start)
		if (spm_tok_push(m, best[pos].id, (size_t)best[pos].start,
				 pos - (size_t)best[pos].start) < 0)
			return -1;
	for (start = 0; start < m->ntok / 2; start++) {
		struct spm_tok t = m->tok[start];

		m->tok[start] = m->tok[m->ntok - 1 - start];
		m->tok[m->ntok - 1 - start] = t;
	}
	return 0;
}
