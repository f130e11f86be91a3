/* tensor.c: element types, tensors, and arrays of f16 to f32; see tensor.h. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "base/errmsg.h"
#include "base/f16.h"
#include "half.h"
#include "tensor.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libtensor keeps payloads in host order and assumes a little-endian host"
#endif

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
	[DT_F32] = { "f32", 4 }, [DT_F16] = { "f16", 2 },
	[DT_BF16] = { "bf16", 2 }, [DT_I32] = { "i32", 4 },
	[DT_I8] = { "i8", 1 }, [DT_U8] = { "u8", 1 },
	[DT_F64] = { "f64", 8 }, [DT_I64] = { "i64", 8 },
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

size_t dtype_size(int dtype)
{
	return dtype > 0 && dtype < NDTYPES ? dtypes[dtype].size : 0;
}

const char *dtype_name(int dtype)
{
	return dtype > 0 && dtype < NDTYPES ? dtypes[dtype].name : NULL;
}

int dtype_parse(const char *name)
{
	for (int i = 1; i < NDTYPES; i++)
		if (strcmp(name, dtypes[i].name) == 0)
			return i;
	return 0;
}

uint64_t tensor_numel(const struct tensor *t)
{
	uint64_t n = 1;

	for (int i = 0; i < t->rank; i++)
		n *= t->dim[i];
	return n;
}

int tensor_name_ok(const char *name, size_t len)
{
	if (len < 1 || len > TENSOR_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("._:-/", c)) || c == 0)
			return 0;
	}
	return 1;
}

void *tensor_alloc(size_t nbytes)
{
	void *p;

	/* 64-byte aligned, like a mapped payload, for the vector kernels;
	 * never NULL for an empty payload, so callers need no special case. */
	if (posix_memalign(&p, 64, nbytes ? nbytes : 1))
		return NULL;
	return p;
}

int tensor_init(struct tensor *t, const char *name, int dtype, int rank,
		const uint64_t *dim)
{
	size_t len = strlen(name);
	uint64_t n = dtype_size(dtype);

	memset(t, 0, sizeof *t);
	if (!tensor_name_ok(name, len)) {
		err_set("bad tensor name \"%.*s\": want 1 to %d of A-Z a-z 0-9 . _ : - /",
			(int)(len > 64 ? 64 : len), name, TENSOR_NAME_MAX);
		return -1;
	}
	if (!n) {
		err_set("tensor %s: unknown dtype %d", name, dtype);
		return -1;
	}
	if (rank < 0 || rank > TENSOR_MAX_RANK) {
		err_set("tensor %s: rank %d not in 0..%d", name, rank,
			TENSOR_MAX_RANK);
		return -1;
	}
	for (int i = 0; i < rank; i++) {
		if (dim[i] && n > SIZE_MAX / dim[i]) {
			err_set("tensor %s: shape too large", name);
			return -1;
		}
		n *= dim[i];
	}
	t->data = tensor_alloc(n);
	if (!t->data) {
		err_set("tensor %s: out of memory for %llu bytes", name,
			(unsigned long long)n);
		return -1;
	}
	memset(t->data, 0, n);
	memcpy(t->name, name, len + 1);
	t->dtype = dtype;
	t->rank = rank;
	if (rank)
		memcpy(t->dim, dim, rank * sizeof *dim);
	t->nbytes = n;
	t->owned = 1;
	return 0;
}

int tensor_init_copy(struct tensor *t, const char *name, int dtype, int rank,
		     const uint64_t *dim, const void *data)
{
	if (tensor_init(t, name, dtype, rank, dim) < 0)
		return -1;
	if (t->nbytes)
		memcpy(t->data, data, t->nbytes);
	return 0;
}

void tensor_free(struct tensor *t)
{
	if (t->owned)
		free(t->data);
	t->data = NULL;
	t->nbytes = 0;
	t->owned = 0;
	t->stored = 0;
	free(t->origin);
	t->origin = NULL;
}

/* ---- half precision ----------------------------------------------------- */

void f16_to_f32_portable(float *dst, const void *src, size_t n)
{
	const unsigned char *p = src;

	for (size_t i = 0; i < n; i++) {
		uint16_t v;
		memcpy(&v, p + 2 * i, 2);
		dst[i] = f16_to_f32(v);
	}
}

int f16c_supported(void)
{
#if !defined(ATTN_NO_SIMD) && (defined(__x86_64__) || defined(__i386__))
	unsigned a, b, c, d;

	/* F16C from cpuid (clang's __builtin_cpu_supports has no name for
	 * it); AVX's registers enabled by the system from the builtin */
	__builtin_cpu_init();
	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) &&
	       __builtin_cpu_supports("avx");
#else
	return 0;
#endif
}

/* Chosen here, once, as crc32_fast's kernel (crc32.c), for the same
 * reason: the stream layer may not depend on the kernels' table. */
static void (*half_kernel)(float *, const void *, size_t);
static pthread_once_t half_once = PTHREAD_ONCE_INIT;

static void choose_half_kernel(void)
{
	const char *env = getenv("ATTN_KERNELS");

	half_kernel = f16_to_f32_portable;
	if (env && strcmp(env, "reference") == 0)
		return;
#if !defined(ATTN_NO_SIMD) && (defined(__x86_64__) || defined(__i386__))
	if (f16c_supported())
		half_kernel = f16_to_f32_f16c;
#endif
}

void f16_to_f32_array(float *dst, const void *src, size_t n)
{
	pthread_once(&half_once, choose_half_kernel);
	half_kernel(dst, src, n);
}

void to_f32(float *dst, const void *src, size_t n, int from_dtype)
{
	const unsigned char *p = src;

	/* memcpy per element: a payload need not be aligned for its type. */
#define CONVERT(T, EXPR) do {                                   \
		for (size_t i = 0; i < n; i++) {                \
			T v;                                    \
			memcpy(&v, p + i * sizeof v, sizeof v); \
			dst[i] = (EXPR);                        \
		}                                               \
	} while (0)
	switch (from_dtype) {
	case DT_F32: memmove(dst, src, n * 4); break;
	case DT_F16: f16_to_f32_array(dst, src, n); break;
	case DT_BF16: CONVERT(uint16_t, bf16_to_f32(v)); break;
	case DT_I32: CONVERT(int32_t, (float)v); break;
	case DT_I8: CONVERT(int8_t, (float)v); break;
	case DT_U8: CONVERT(uint8_t, (float)v); break;
	case DT_F64: CONVERT(double, (float)v); break;
	case DT_I64: CONVERT(int64_t, (float)v); break;
	}
#undef CONVERT
}
