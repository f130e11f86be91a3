/*
 * npy.h: numpy's .npy array format (format versions 1, 2 and 3): the magic
 * "\x93NUMPY", the version, the header's length (16 bits in version 1,
 * 32 in 2 and 3), and the header, a Python dict literal with the keys
 * 'descr', 'fortran_order' and 'shape'; then the elements, C order.
 * Little-endian float32 ('<f4') and float16 ('<f2') arrays are read, and
 * arrays of bytes ('|i1', '|u1', '<i1', '|S1', ...), in which Marian keeps
 * its configuration (special:model.yml).  Anything else (another type,
 * Fortran order, big-endian, a shape whose elements do not fill the
 * data, a header longer than NPY_MAX_HEADER) is refused naming what.
 */
#ifndef ATTN_NPY_H
#define ATTN_NPY_H

#include <stddef.h>
#include <stdint.h>

enum { NPY_F32, NPY_F16, NPY_BYTES };

#define NPY_MAX_RANK 8
/* Bytes of a header's dict, at most (numpy writes some 100; its own
 * reader takes 10,000) */
#define NPY_MAX_HEADER 65536

struct npy {
	int dtype;			/* NPY_* */
	int rank;			/* 0 (a scalar) .. NPY_MAX_RANK */
	uint64_t shape[NPY_MAX_RANK];
	uint64_t count;			/* elements: the shape's product */
	const uint8_t *data;		/* into the parsed bytes */
	size_t nbytes;			/* count * the element's size */
};

/*
 * Parses the n bytes at p (one .npy file) into a, whose data points into
 * p.  Bytes after the data are refused (a .npy holds one array).  0, or
 * -1 with err_msg() saying what is wrong.
 */
int npy_parse(struct npy *a, const void *p, size_t n);
/*
 * The header alone, from the first n bytes at p of a .npy of total
 * bytes (an archive's member read without inflating the rest): into a
 * as npy_parse (a->data NULL), *off the data's offset in the file, and
 * 0.  1 when the header needs more bytes than n: call again with *off
 * of them (at most 12 + NPY_MAX_HEADER).  -1 with err_msg() as
 * npy_parse.
 */
int npy_parse_header(struct npy *a, const void *p, size_t n,
		     uint64_t total, size_t *off);

#endif
