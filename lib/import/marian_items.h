/*
 * marian_items.h: the named arrays of a Marian model file, from either of
 * its two formats: .npz (numpy's zip of .npy arrays: zip.h, npy.h) or
 * Marian's own binary .bin.  Both hold the parameters (float32, or
 * float16) and special:model.yml, the model's configuration as bytes
 * (with a NUL at its end).
 */
#ifndef ATTN_MARIAN_ITEMS_H
#define ATTN_MARIAN_ITEMS_H

#include <stddef.h>
#include <stdint.h>
#include "npy.h"
#include "text/strmap.h"
#include "zip.h"

/*
 * A .bin item of Marian's type intgemm8 (0x4101, src/common/types.h:
 * signed_type + 1 + intgemm_type), as marian-conv -g intgemm8 writes it
 * (src/tensors/cpu/expression_graph_packable.h packAndSave, l. 190-240):
 * count int8 values, then the float32 multiplier qm (127 / max |w| of the
 * whole matrix: w = q / qm), then padding to the item's data bytes.  The
 * shape is the float matrix's, [in, out], but the values are of its
 * transpose, [out, in] row by row (Transpose10 before quantising), except
 * for an item whose name holds "Wemb", which is stored as it is; and
 * binary.cpp loadItems (l. 70-78) turns a "Wemb" item back into floats,
 * q * (1 / qm).  intgemm_mult is qm.
 */
#define MARIAN_INTGEMM8 16

struct marian_item {
	char *name;
	int dtype;			/* NPY_F32, NPY_F16, NPY_BYTES or
					   MARIAN_INTGEMM8 (int8 values) */
	float intgemm_mult;		/* MARIAN_INTGEMM8: qm, finite, > 0 */
	int rank;
	uint64_t shape[NPY_MAX_RANK];
	uint64_t count;			/* elements */
	const uint8_t *data;		/* count elements, little-endian;
					   NULL until loaded (an .npz's) */
	void *own;			/* what data points into, if owned */
	int member;			/* an .npz's: its member, */
	size_t off;			/* where its data begins in it */
};

struct marian_items {
	int n;
	struct marian_item *it;
	struct zip z;			/* an .npz's directory */
	struct strmap index;		/* name -> item; without it (items
					   made by hand) they are scanned */
};

/*
 * The arrays of an .npz archive (the n bytes at p) or of a .bin file,
 * every one's data read: 0, or -1 with err_msg() naming what is wrong
 * and where.  The two are told apart by their first bytes: a zip archive
 * begins with a local header ("PK\3\4"); a .bin file with its version,
 * 1, as 8 bytes.  The items point into p, which must outlive them (an
 * .npz's stored members; its deflated ones are inflated copies).  An
 * item's name is there once (a hash: time linear in the items).
 */
int marian_items_read(struct marian_items *mi, const void *p, size_t n);
int marian_items_read_npz(struct marian_items *mi, const void *p, size_t n);
int marian_items_read_bin(struct marian_items *mi, const void *p, size_t n);
/*
 * The same with the items' names, types and shapes alone, from a .bin's
 * headers or each .npz member's .npy header (a deflated member's first
 * bytes inflated, not the rest): its data, each item's, is read by
 * marian_item_load, when the shapes are known to be the ones wanted.
 * Every size is checked against the file's: an .npz's items hold at most
 * 1032 times its bytes (deflate's bound), a .bin's its bytes.
 */
int marian_items_open(struct marian_items *mi, const void *p, size_t n);
/*
 * Item it's data (it->data): a member of an .npz inflated (a stored one
 * read where it is), its CRC-32 checked; nothing to do for a .bin's or
 * an item already loaded.  0, or -1 with err_msg() naming the member.
 */
int marian_item_load(struct marian_items *mi, const struct marian_item *it);
/* Lets it's data go (an .npz's, inflated), until loaded again. */
void marian_item_unload(struct marian_items *mi, const struct marian_item *it);
/* The item called name, or NULL. */
const struct marian_item *marian_item(const struct marian_items *mi,
				      const char *name);
void marian_items_free(struct marian_items *mi);

#endif
