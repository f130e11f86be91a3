/*
 * spm_norm.c: SentencePiece's normaliser.  The text is read one prefix at
 * a time: a user-defined symbol as it is, else the longest source string
 * of the charsmap as its normalised string, else one UTF-8 character (an
 * invalid byte becomes U+FFFD).  With remove_extra_whitespaces, leading
 * spaces go, a space after a space goes, and trailing spaces go; with
 * add_dummy_prefix a space is put first (or last, with the trainer's
 * treat_whitespace_as_suffix); with escape_whitespaces every space is
 * written U+2581.
 */
#include <string.h>
#include "spm_impl.h"
#include "base/utf8.h"

#define SPACE_SYMBOL "\xe2\x96\x81"     /* U+2581 */

/* SentencePiece's test of one character: valid, or U+FFFD itself. */
static size_t valid_char(const char *s, size_t n)
{
	uint32_t cp;
	int len = utf8_decode((const unsigned char *)s, n, &cp);

	return len > 0 ? (size_t)len : 0;
}

/* The normalised form of the prefix of s [n]: *out [*outlen], and the
 * bytes it consumes. */
static size_t prefix(const struct spm_norm *nm, const struct spm_trie *user,
		     const char *s, size_t n, const char **out,
		     size_t *outlen)
{
	size_t len;
	int32_t v;

	if (user && (len = spm_trie_longest(user, s, n, &v))) {
		*out = s;
		*outlen = len;
		return len;
	}
	if ((len = spm_charsmap_match(&nm->map, s, n, out, outlen)))
		return len;
	if (!(len = valid_char(s, n))) {
		*out = "\xef\xbf\xbd";
		*outlen = 3;
		return 1;
	}
	*out = s;
	*outlen = len;
	return len;
}

static int add_space(const struct spm_norm *nm, struct bpe_text *out)
{
	return nm->escape_whitespaces ? bpe_text_add(out, SPACE_SYMBOL, 3)
				      : bpe_text_add(out, " ", 1);
}

/* from [2 k], [2 k + 1] = a, b for each byte k of out up to upto. */
static int origin(struct bpe_ids *from, size_t upto, size_t a, size_t b)
{
	while (from && from->n < 2 * upto)
		if (bpe_ids_push(from, (int32_t)a) < 0 ||
		    bpe_ids_push(from, (int32_t)b) < 0)
			return -1;
	return 0;
}

int spm_normalize(const struct spm_norm *nm, const struct spm_trie *user,
		  const char *s, size_t n, struct bpe_text *out,
		  struct bpe_ids *from)
{
	const char *sp, *s0 = s;
	size_t used, splen, k, run, n0 = n;
	int prev_space;

	out->n = 0;
	if (from)
		from->n = 0;
	if (nm->remove_extra_whitespaces) {
		while (n) {
			used = prefix(nm, user, s, n, &sp, &splen);
			if (splen != 1 || *sp != ' ')
				break;
			s += used;
			n -= used;
		}
	}
	if (!n)
		return 0;
	prev_space = nm->remove_extra_whitespaces;
	if (!nm->suffix && nm->add_dummy_prefix && add_space(nm, out) < 0)
		return -1;
	if (origin(from, out->n, s - s0, s - s0) < 0)
		return -1;
	while (n) {
		used = prefix(nm, user, s, n, &sp, &splen);
		if (prev_space)
			while (splen && *sp == ' ') {
				sp++;
				splen--;
			}
		if (splen) {
			for (k = 0; k < splen; k = run) {
				if (sp[k] == ' ' && nm->escape_whitespaces) {
					if (add_space(nm, out) < 0)
						return -1;
					run = k + 1;
					continue;
				}
				for (run = k; run < splen && !(sp[run] == ' ' &&
					nm->escape_whitespaces); run++)
					;
				if (bpe_text_add(out, sp + k, run - k) < 0)
					return -1;
			}
			prev_space = sp[splen - 1] == ' ';
			if (origin(from, out->n, s - s0, s - s0 + used) < 0)
				return -1;
		}
		s += used;
		n -= used;
		if (!nm->remove_extra_whitespaces)
			prev_space = 0;
	}
	if (nm->remove_extra_whitespaces) {
		const char *sym = nm->escape_whitespaces ? SPACE_SYMBOL : " ";
		size_t symlen = nm->escape_whitespaces ? 3 : 1;

		while (out->n >= symlen &&
		       !memcmp(out->s + out->n - symlen, sym, symlen))
			out->n -= symlen;
		if (from)
			from->n = 2 * out->n;
	}
	if (nm->suffix && nm->add_dummy_prefix && add_space(nm, out) < 0)
		return -1;
	return origin(from, out->n, n0, n0);
}
