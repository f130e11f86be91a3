/*
 * npy_write.c: an .npy header (npy_write.h).
 */
#include <stdio.h>
#include <string.h>
#include "base/errmsg.h"
#include "npy.h"
#include "npy_write.h"

int npy_header(char *buf, int dtype, int rank, const uint64_t *shape)
{
	char dict[NPY_HEADER_MAX];
	const char *descr = dtype == NPY_F32 ? "<f4" :
		dtype == NPY_BYTES ? "|i1" : NULL;
	int n, total;

	if (!descr || rank < 1 || rank > 2) {
		err_set("npy: only float32 and byte arrays of rank 1 or 2 "
			"are written");
		return -1;
	}
	if (rank == 1)
		n = snprintf(dict, sizeof dict, "{'descr': '%s', "
			     "'fortran_order': False, 'shape': (%llu,), }",
			     descr, (unsigned long long)shape[0]);
	else
		n = snprintf(dict, sizeof dict, "{'descr': '%s', "
			     "'fortran_order': False, 'shape': (%llu, %llu), }",
			     descr, (unsigned long long)shape[0],
			     (unsigned long long)shape[1]);
	/* magic 6, version 2, length 2, the dict, spaces, a newline */
	total = (10 + n + 1 + 63) / 64 * 64;
	if (n < 0 || total > NPY_HEADER_MAX) {
		err_set("npy: the header of a [%llu ...] array is too long",
			(unsigned long long)shape[0]);
		return -1;
	}
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((total - 10) & 0xff);
	buf[9] = (char)((total - 10) >> 8);
	memcpy(buf + 10, dict, (size_t)n);
	memset(buf + 10 + n, ' ', (size_t)(total - 10 - n - 1));
	buf[total - 1] = '\n';
	return total;
}
