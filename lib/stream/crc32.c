/*
 * crc32.c: the portable CRC-32 kernel, slicing by eight: table k holds the
 * CRC of a byte followed by k zero bytes, so eight bytes cost eight
 * independent look-ups instead of eight dependent ones; and the choice of
 * kernel (crc32_fast).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "crc32.h"

#define POLY 0xedb88320u        /* x^32 + x^26 + ... + 1, reflected */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? c >> 1 ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			table[k][i] = table[k - 1][i] >> 8 ^
				      table[0][table[k - 1][i] & 0xff];
}

/* Little-endian, whatever the machine (compilers make this one load). */
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint32_t crc32_register(uint32_t reg, const unsigned char *p, size_t n)
{
	pthread_once(&table_once, make_tables);
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t a = le32(p) ^ reg, b = le32(p + 4);

		reg = table[7][a & 0xff] ^ table[6][a >> 8 & 0xff] ^
		      table[5][a >> 16 & 0xff] ^ table[4][a >> 24] ^
		      table[3][b & 0xff] ^ table[2][b >> 8 & 0xff] ^
		      table[1][b >> 16 & 0xff] ^ table[0][b >> 24];
	}
	for (; n; n--, p++)
		reg = table[0][(reg ^ *p) & 0xff] ^ reg >> 8;
	return reg;
}

uint32_t crc32_sliced(uint32_t crc, const void *p, size_t n)
{
	return ~crc32_register(~crc, p, n);
}

/*
 * The choice is made here, once, and not through the kernels' table
 * (kernels/kern_impl.h): the stream layer sits below the kernels and may
 * not depend on them, so it reads ATTN_KERNELS itself.
 */
static uint32_t (*kernel)(uint32_t, const void *, size_t);
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void choose_kernel(void)
{
	const char *env = getenv("ATTN_KERNELS");

	kernel = crc32_sliced;
	if (env && strcmp(env, "reference") == 0)
		return;
#if !defined(ATTN_NO_SIMD) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1"))
		return;
	kernel = crc32_pclmul;
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("vpclmulqdq") &&
	    !(env && strncmp(env, "avx2", 4) == 0))
		kernel = crc32_vpclmul;
#endif
}

uint32_t crc32_fast(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&kernel_once, choose_kernel);
	return kernel(crc, p, n);
}
