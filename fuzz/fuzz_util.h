/*
 * fuzz_util.h: what the fuzz targets share: a memory file, record
 * comparison, and the text form's checks.  Each aborts (a finding for
 * libFuzzer) where the code under test is wrong.
 */
#ifndef ATTN_FUZZ_UTIL_H
#define ATTN_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "stream/stream.h"

/* A memory file (memfd) holding the n bytes at p, at offset 0. */
int fuzz_mem_file(const void *p, size_t n);
/* Aborts unless a and b are the same record (name, type, shape, frame,
 * payload bit for bit). */
void fuzz_same(const struct tensor *a, const struct tensor *b);
/* t printed as text reads back the same. */
void fuzz_text_roundtrip(const struct tensor *t);
/* Any input read as text: no crash, and what parses prints and parses
 * back the same. */
void fuzz_text_input(const uint8_t *data, size_t size);

#endif
