/*
 * tsr_text.h: a text form of tensor records, for people and tests to
 * write tensors by hand and to read them (tensordump --text and
 * --from-text).  Values are printed so that they read back to the same
 * bits, so text -> stream -> text -> stream is exact.
 *
 *      tsr-text 1
 *      record src.text u8 [11] frame 0
 *      "hola mundo\n"
 *      record src.ids i32 [4] frame 0 end
 *      5 6 7 2
 *      record enc.out f32 [2,2] frame 0 zlib 6
 *      0.5 -1
 *      nan inf
 *
 * A record line gives the name, dtype and shape ([] for a scalar), then
 * optionally: frame N (default 0), end (the end-of-frame flag), zlib
 * [LEVEL] (compressed, at that level), pad N (the padding, when it is not
 * the aligning one).  The lines after it hold the values, row-major,
 * separated by blanks.  Floats: decimal (or hex) numbers, inf, -inf, nan,
 * -nan, or nan:0xBITS for a NaN with other bits.  u8 and i8 values may also
 * be "strings" with the escapes \n \t \" \\ \xNN, one element per byte.
 * '#' starts a comment outside strings; blank lines do not matter.
 */
#ifndef ATTN_TSR_TEXT_H
#define ATTN_TSR_TEXT_H

#include <stdio.h>
#include "stream.h"

/* How a record is written: the flags and details of its stream form. */
struct tsr_text_attr {
	uint64_t frame;
	int flags;              /* TSR_FLAG_* */
	int level;              /* zlib level, 0 if unknown or plain */
	int pad;                /* explicit padding, or -1 */
};

/*
 * Formats the element at p of the given dtype into out (cap >= 48) so that
 * it reads back to the same bits; returns its length.
 */
int tsr_text_value(char *out, size_t cap, const void *p, int dtype);

/* Prints t in the text form: its record line, then its values. */
int tsr_text_print(FILE *out, const struct tensor *t,
		   const struct tsr_text_attr *a);
/* The first line of the text form. */
#define TSR_TEXT_HEADER "tsr-text 1"

struct tsr_text_reader;
struct tsr_text_reader *tsr_text_open(FILE *in, const char *label);
/*
 * Reads the next record: 1, 0 at the end of input, -1 on an error whose
 * message names the input, the line and the record.
 */
int tsr_text_read(struct tsr_text_reader *r, struct tensor *t,
		  struct tsr_text_attr *a);
void tsr_text_close(struct tsr_text_reader *r);

#endif
