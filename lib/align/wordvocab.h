/*
 * wordvocab.h: the words of one side of a word aligner's bitext, each
 * given an id from 1 (0 is the aligner's NULL word, which no text has).
 *
 * A word is a run of bytes other than space and tab (the text's
 * whitespace words: the positions the aligner reports are theirs).  With
 * fold, the word's key in the vocabulary is its lower case (Unicode's
 * simple mapping) with the punctuation (Unicode P*) at either end cut
 * off, unless nothing would be left: "Señor!" and "señor" are one word;
 * bytes of no valid UTF-8 character are kept as they are.
 */
#ifndef ATTN_WORDVOCAB_H
#define ATTN_WORDVOCAB_H

#include <stddef.h>
#include <stdint.h>

struct wa_vocab {
	int n;			/* words, ids 1..n */
	char *buf;		/* the words' bytes, each followed by '\0' */
	size_t len, cap;
	size_t *off;		/* [n + 1] where word id starts in buf */
	int off_cap;
	int32_t *slot;		/* hash table of ids, 0 empty */
	size_t nslot;		/* a power of two */
};

/* The id of the key w [len] (a key, not a raw word: see wa_vocab_key);
 * with add, a new word gets the next id.  0 when absent and !add; -1
 * (err_msg()) when out of memory or past INT32_MAX words. */
int32_t wa_vocab_id(struct wa_vocab *v, const char *w, size_t len, int add);
/* Word id's bytes (id from 1 to n), '\0'-terminated. */
const char *wa_vocab_word(const struct wa_vocab *v, int32_t id);
void wa_vocab_free(struct wa_vocab *v);

/*
 * The key of the word w [len] (not empty): w itself without fold, else as
 * above, written to out (room for 2 len + 8 bytes: lower case may
 * lengthen a character by a byte, a few by two).  Returns its length.
 */
size_t wa_vocab_key(const char *w, size_t len, int fold, char *out);

/*
 * The words of line [len] (ended by its length; "\r" and "\n" count as
 * spaces), their ids in the vocabulary appended to *ids (grown with
 * realloc, *cap its room): with add new words added, else an unknown
 * word is -1.  Returns the number of words, or -1 (err_msg()) when out
 * of memory.
 */
int wa_vocab_words(struct wa_vocab *v, const char *line, size_t len,
		   int fold, int add, int32_t **ids, size_t *n, size_t *cap);

#endif
