/*
 * zip.h: a reader of zip archives held in memory, enough for numpy's
 * .npz files (and Marian's, written by its own cnpy): the central
 * directory (ZIP64 included: numpy writes every member with ZIP64
 * fields), members stored or deflated (zlib's raw inflate), each one's
 * CRC-32 checked when read whole; a member's first bytes (an array's
 * header) may be read alone, without inflating the rest.  Encrypted members, other methods and multi-disk
 * archives are refused, and so are members that share bytes (a zip
 * bomb names the same deflated data many times).  Every offset and size is checked against the
 * archive's bytes before it is used: a corrupt or crafted archive is
 * refused with a message naming the member, never read out of bounds.
 */
#ifndef ATTN_ZIP_H
#define ATTN_ZIP_H

#include <stddef.h>
#include <stdint.h>

/* Members of an archive, at most (a Transformer of 12 + 12 layers has
 * about 400). */
#define ZIP_MAX_MEMBERS 65536

struct zip_member {
	char *name;		/* NUL-terminated; names with a NUL refused */
	uint64_t local;		/* offset of its local header */
	uint64_t csize, usize;	/* compressed and uncompressed bytes */
	uint32_t crc;
	int method;		/* 0 stored, 8 deflated */
};

struct zip {
	const uint8_t *p;	/* the archive, not owned */
	size_t n;
	int count;
	struct zip_member *m;	/* [count], in the central directory's
				   order */
};

/*
 * Reads the central directory of the n bytes at p into z (which points
 * into p: p must outlive it).  0, or -1 with err_msg() saying what is
 * wrong and where; z is then empty (zip_close is still safe).
 */
int zip_open(struct zip *z, const void *p, size_t n);
/* The index of the member called name, or -1. */
int zip_find(const struct zip *z, const char *name);
/*
 * Member i's bytes, malloc'ed (one byte more, a NUL after the last),
 * *len their number; its local header, its size and its CRC-32 checked.
 * NULL with err_msg() naming the member otherwise.
 */
void *zip_extract(const struct zip *z, int i, size_t *len);
/*
 * Member i's bytes where they can be read without a copy: a stored
 * member's in the archive (*own NULL), CRC-32 checked; a deflated one's
 * as zip_extract gives them, to be freed (*own).  *len their number.
 * NULL with err_msg() naming the member otherwise.
 */
const void *zip_data(const struct zip *z, int i, void **own, size_t *len);
/*
 * The first want bytes of member i (all of them when it is shorter; *got
 * their number), for a look at its header without inflating the rest:
 * a stored member's in the archive, a deflated one's inflated into buf
 * (want bytes).  The CRC-32, over the whole member, is not checked
 * (zip_data and zip_extract check it).  NULL with err_msg() naming the
 * member when it is not there or its data is corrupt.
 */
const void *zip_peek(const struct zip *z, int i, void *buf, size_t want,
		     size_t *got);
void zip_close(struct zip *z);

#endif
