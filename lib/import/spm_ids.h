/*
 * spm_ids.h: the special ids of a SentencePiece model (its ModelProto,
 * protobuf bytes): the index of the piece "</s>" and of the piece of
 * type UNKNOWN, as Marian takes them from the .spm file it is given.
 * Only what that needs is read: field 1 of the ModelProto, the repeated
 * pieces, and in each its field 1 (the piece) and 3 (its type).
 */
#ifndef ATTN_SPM_IDS_H
#define ATTN_SPM_IDS_H

#include <stddef.h>

/*
 * The number of pieces into *size, and the ids of </s> and of the
 * unknown piece (-1 where there is none).  0, or -1 with err_msg() set
 * when the bytes are no protobuf of pieces.
 */
int spm_special_ids(const void *p, size_t n, int *size, int *eos, int *unk);

#endif
