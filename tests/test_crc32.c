/*
 * test_crc32.c: both CRC-32 kernels (crc32.h), the choice between them
 * (crc32_fast) and the stream's use of it (tsr_crc) against zlib's crc32:
 * every length 0..300 at every alignment 0..15, large buffers, a known
 * answer, and a CRC carried across pieces as zlib's is.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "stream/crc32.h"
#include "run_suite.h"
#include "stream/tsr_record.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* The kernels this CPU can run, and the choice among them. */
static int kernels(crc_fn *k, const char **name)
{
	int n = 0;

	k[n] = crc32_fast;
	name[n++] = "fast";
	k[n] = crc32_sliced;
	name[n++] = "sliced";
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") &&
	    __builtin_cpu_supports("sse4.1")) {
		k[n] = crc32_pclmul;
		name[n++] = "pclmul";
	}
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("vpclmulqdq")) {
		k[n] = crc32_vpclmul;
		name[n++] = "vpclmul";
	}
	return n;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned char *random_bytes(size_t n)
{
	unsigned char *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++)
		p[i] = next() >> 32;
	return p;
}

static uint32_t zlib_crc(uint32_t crc, const unsigned char *p, size_t n)
{
	return crc32_z(crc, p, n);
}

START_TEST(known_answer)
{
	crc_fn k[4];
	const char *name[4];
	int nk = kernels(k, name);
	/* The check value of CRC-32/ISO-HDLC, and 64 bytes for the folds. */
	const char *nine = "123456789";
	char zeros[64] = { 0 };

	for (int i = 0; i < nk; i++) {
		ck_assert_msg(k[i](0, nine, 9) == 0xcbf43926u, "%s", name[i]);
		ck_assert_msg(k[i](0, zeros, 64) == 0x758d6336u, "%s", name[i]);
		ck_assert_msg(k[i](0, "", 0) == 0, "%s", name[i]);
	}
	ck_assert_uint_eq(tsr_crc(nine, 9), 0xcbf43926u);
}
END_TEST

START_TEST(every_length_and_alignment)
{
	crc_fn k[4];
	const char *name[4];
	int nk = kernels(k, name);
	unsigned char *buf = random_bytes(300 + 16);

	for (size_t align = 0; align < 16; align++)
		for (size_t n = 0; n <= 300; n++) {
			const unsigned char *p = buf + align;
			uint32_t want = zlib_crc(0, p, n);
			uint32_t seed = next();

			for (int i = 0; i < nk; i++) {
				ck_assert_msg(k[i](0, p, n) == want,
					      "%s, %zu bytes at +%zu", name[i],
					      n, align);
				/* a CRC carried in, as zlib's crc32(crc, ..) */
				ck_assert_msg(k[i](seed, p, n) ==
					      zlib_crc(seed, p, n),
					      "%s, %zu bytes after a CRC",
					      name[i], n);
			}
			ck_assert_uint_eq(tsr_crc(p, n), want);
		}
	free(buf);
}
END_TEST

START_TEST(large)
{
	static const size_t sizes[] = { 4096, 65536 + 7, (1 << 20) + 63,
					(3 << 20) + 17 };
	crc_fn k[4];
	const char *name[4];
	int nk = kernels(k, name);

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		unsigned char *buf = random_bytes(sizes[s] + 1);

		for (size_t off = 0; off < 2; off++) {
			uint32_t want = zlib_crc(0, buf + off, sizes[s]);

			for (int i = 0; i < nk; i++)
				ck_assert_msg(k[i](0, buf + off, sizes[s]) ==
					      want, "%s, %zu bytes", name[i],
					      sizes[s]);
			ck_assert_uint_eq(tsr_crc(buf + off, sizes[s]), want);
		}
		free(buf);
	}
}
END_TEST

/* A buffer cut at random places and the CRC carried from piece to piece,
 * the kernels taking turns: the CRC of the whole. */
START_TEST(pieces)
{
	crc_fn k[4];
	const char *name[4];
	int nk = kernels(k, name);
	size_t n = 100000;
	unsigned char *buf = random_bytes(n);
	uint32_t want = zlib_crc(0, buf, n);

	for (int round = 0; round < 50; round++) {
		uint32_t crc = 0;
		size_t at = 0;
		int turn = round;

		while (at < n) {
			size_t len = next() % (round < 25 ? 200 : 5000);

			if (len > n - at)
				len = n - at;
			crc = k[turn++ % nk](crc, buf + at, len);
			at += len;
		}
		ck_assert_uint_eq(crc, want);
	}
	free(buf);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("crc32");
	TCase *tc = tcase_create("crc32");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, known_answer);
	tcase_add_test(tc, every_length_and_alignment);
	tcase_add_test(tc, large);
	tcase_add_test(tc, pieces);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
