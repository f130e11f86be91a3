/*
 * zip_write.h: a writer of zip archives of stored (uncompressed) members,
 * enough for an .npz that Marian reads: its cnpy (marian-dev
 * src/3rd_party/cnpy/cnpy.cpp, npz_load) walks the local headers one
 * after the other and reads each member's .npy in place, so members are
 * stored, each local header carries its CRC-32 and sizes (no data
 * descriptor), no extra fields, no ZIP64 (cnpy reads 32-bit sizes: an
 * archive of 4 GiB or more is refused), and no timestamps (0, as cnpy
 * writes them: the same model gives the same bytes).  zip.h reads them
 * back.
 */
#ifndef ATTN_ZIP_WRITE_H
#define ATTN_ZIP_WRITE_H

#include <stddef.h>
#include <stdint.h>

struct zip_writer {
	int fd;			/* not owned */
	const char *label;	/* names the file in errors */
	uint64_t off;		/* bytes written */
	int count, cap;
	struct zip_written {
		char *name;
		uint32_t crc, size, local;
	} *m;
};

/* An archive written to fd from its current position (taken as 0). */
void zip_writer_init(struct zip_writer *z, int fd, const char *label);
/*
 * Appends member name, the concatenation of the n parts part[i] of len[i]
 * bytes (an .npy's header and its data need no copy into one block).
 * 0, or -1 with err_msg() naming the file and the member.
 */
int zip_writer_add(struct zip_writer *z, const char *name,
		   const void *const *part, const size_t *len, int n);
/* The central directory and its end record: 0, or -1 (err_msg()). */
int zip_writer_finish(struct zip_writer *z);
/* Frees the member list (the fd is the caller's). */
void zip_writer_free(struct zip_writer *z);

#endif
