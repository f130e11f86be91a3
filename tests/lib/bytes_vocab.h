/*
 * bytes_vocab.h: for the unit tests, an attn-bpe vocabulary of the
 * specials and the 256 byte units alone (<pad> 0, <s> 1, </s> 2, <unk> 3,
 * byte b as "<0xBB>" BPE_BYTE0 + b): the ids of a text are its bytes +
 * BPE_BYTE0, so a space is a unit of its own.
 */
#ifndef ATTN_TESTS_BYTES_VOCAB_H
#define ATTN_TESTS_BYTES_VOCAB_H

#include "text/vocab.h"

/* The vocabulary (vocab_free it); the test fails if it does not load. */
struct vocab *bytes_vocab(void);

#endif
