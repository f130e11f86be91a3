/*
 * npy_write.h: the header of a numpy .npy array (npy.h's format) as
 * Marian's reader takes it: cnpy's parse_npy_header (marian-dev
 * src/3rd_party/cnpy/cnpy.cpp) reads the header's dict with one fgets of
 * at most 255 bytes after the first 11, so the header is version 1.0's
 * (a 16-bit length), padded with spaces and ended by a newline so that
 * the data begins 64-byte aligned, as numpy's own writer does.
 */
#ifndef ATTN_NPY_WRITE_H
#define ATTN_NPY_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* The longest header written (cnpy's fgets buffer is 256 bytes). */
#define NPY_HEADER_MAX 256

/*
 * Writes into buf [NPY_HEADER_MAX] the header of a C-order array of
 * dtype (NPY_F32: '<f4', NPY_BYTES: '|i1', as Marian stores its
 * model.yml; npy.h's enum) and rank dimensions shape (rank 1 or 2: a
 * 1-D array's dict says "(n,)").  Its length, a multiple of 64, or -1
 * with err_msg() set (another dtype or rank, or a shape too long to fit).
 */
int npy_header(char *buf, int dtype, int rank, const uint64_t *shape);

#endif
