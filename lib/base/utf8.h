/*
 * utf8.h: strict UTF-8 decoding (RFC 3629): shortest form only, no
 * surrogates, nothing above U+10FFFF.  Callers decide what an invalid byte
 * means (the subword tokenizer keeps it as a byte unit, BLEU as a byte).
 */
#ifndef ATTN_UTF8_H
#define ATTN_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the character at s (n >= 1 bytes available) into *cp.  Returns
 * its length in bytes, 1 to 4, or 0 when the bytes at s do not start a
 * valid sequence (*cp is then s[0]).
 */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * Writes code point c (at most U+10FFFF, not a surrogate) to out as UTF-8;
 * returns its length, 1 to 4.
 */
int utf8_encode(char *out, uint32_t c);

/*
 * Copies n bytes from s to out (room for 3 n bytes), each byte that does
 * not start a valid sequence replaced by U+FFFD, so that printed text is
 * always valid UTF-8.  Returns the number of bytes written.
 */
size_t utf8_repair(unsigned char *out, const unsigned char *s, size_t n);

#endif
