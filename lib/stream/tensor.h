/*
 * tensor.h: the tensor type of libtensor: an element type, a shape, a name,
 * a frame number and a payload.  The stream format (stream.h) carries these
 * records; the kernels (kernels.h) work on plain float arrays and know
 * nothing of this type.
 */
#ifndef ATTN_TENSOR_H
#define ATTN_TENSOR_H

#include <stddef.h>
#include <stdint.h>

/* Public: libtensor.so exports what is declared from here to the pop (the
 * library is built with -fvisibility=hidden; see the Makefile). */
#pragma GCC visibility push(default)

/* Element types, with the codes of doc/FORMAT.md. */
enum dtype {
	DT_F32 = 1, DT_F16 = 2, DT_BF16 = 3, DT_I32 = 4,
	DT_I8 = 5, DT_U8 = 6, DT_F64 = 7, DT_I64 = 8,
};

#define TENSOR_MAX_RANK 8
#define TENSOR_NAME_MAX 255

struct tensor {
	char name[TENSOR_NAME_MAX + 1];
	enum dtype dtype;
	int rank;                       /* 0 .. TENSOR_MAX_RANK; 0 is a scalar */
	uint64_t dim[TENSOR_MAX_RANK];  /* outermost first */
	uint64_t frame;
	void *data;                     /* numel * dtype_size bytes */
	size_t nbytes;
	int owned;                      /* data was malloc'ed for this tensor */
	/*
	 * 0, or a record kept as it was stored (tsr_reader_set_raw): data
	 * then holds `stored` bytes of one zlib stream, meant to inflate
	 * to the nbytes of the payload with checksum crc.  The writer
	 * copies them as they are; frame_find inflates (tsr_inflate).
	 */
	size_t stored;
	uint32_t crc;
	/*
	 * NULL, or for a record kept as stored by a lazy reader
	 * (TSR_RAW_LAZY), whose zlib stream and checksum are checked only
	 * when tsr_inflate inflates it: the stream it was read from
	 * (malloc'ed, freed with the tensor), and offset, where the record
	 * starts there, so that a refusal then names it as the reader
	 * would have.
	 */
	char *origin;
	uint64_t offset;
};

size_t dtype_size(int dtype);            /* 0 for an invalid code */
const char *dtype_name(int dtype);       /* "f32", ...; NULL if invalid */
int dtype_parse(const char *name);       /* code, or 0 if unknown */

/* Number of elements (1 for rank 0). */
uint64_t tensor_numel(const struct tensor *t);

/*
 * Makes t a tensor of the given name, type and shape with a zeroed payload
 * owned by t.  Returns 0, or -1 (err_msg() says why) on a bad name, type,
 * rank or size.
 */
int tensor_init(struct tensor *t, const char *name, int dtype, int rank,
		const uint64_t *dim);
/* The same with the payload copied from data (nbytes must match). */
int tensor_init_copy(struct tensor *t, const char *name, int dtype, int rank,
		     const uint64_t *dim, const void *data);
void tensor_free(struct tensor *t);      /* frees an owned payload */
/* A payload buffer: 64-byte aligned, never NULL for 0 bytes (NULL only when
 * out of memory); release it with free(). */
void *tensor_alloc(size_t nbytes);

/* Checks a record name against doc/FORMAT.md: 1..255 of [A-Za-z0-9._:-/]. */
int tensor_name_ok(const char *name, size_t len);

/* f16 and bf16 from f32: round to nearest, ties to even; NaN stays NaN
 * (lib/base/f16.c; kept here as libtensor's public interface). */
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);

/* Converts n elements of any dtype at src into f32 at dst. */
void to_f32(float *dst, const void *src, size_t n, int from_dtype);

#pragma GCC visibility pop

#endif
