/* bitext.c: sentence pairs as word ids; see bitext.h. */
#include <stdlib.h>
#include <string.h>
#include "bitext.h"
#include "base/errmsg.h"

int wa_bitext_add(struct wa_bitext *b, struct wa_vocab *const v[2],
		  const char *const line[2], const size_t len[2], int fold,
		  int add)
{
	static const char *const side[2] = { "source", "target" };

	if (b->n + 2 > b->cap) {
		int cap = 2 * b->cap + 1024;

		for (int s = 0; s < 2; s++) {
			int64_t *o = realloc(b->off[s], cap * sizeof *o);

			if (!o) {
				err_set("bitext: out of memory");
				return -1;
			}
			if (!b->off[s])
				o[0] = 0;
			b->off[s] = o;
		}
		b->cap = cap;
	}
	for (int s = 0; s < 2; s++) {
		int k = wa_vocab_words(v[s], line[s], len[s], fold, add,
				       &b->ids[s], &b->nids[s], &b->idcap[s]);

		if (k < 0)
			goto undo;
		if (k > WA_MAX_WORDS) {
			err_set("%s line of %d words, more than %d", side[s],
				k, WA_MAX_WORDS);
			goto undo;
		}
	}
	b->n++;
	for (int s = 0; s < 2; s++)
		b->off[s][b->n] = (int64_t)b->nids[s];
	return 0;
undo:
	for (int s = 0; s < 2; s++)
		b->nids[s] = (size_t)b->off[s][b->n];
	return -1;
}

void wa_bitext_clear(struct wa_bitext *b)
{
	b->n = 0;
	b->nids[0] = b->nids[1] = 0;
}

void wa_bitext_free(struct wa_bitext *b)
{
	for (int s = 0; s < 2; s++) {
		free(b->off[s]);
		free(b->ids[s]);
	}
	memset(b, 0, sizeof *b);
}
