/*
 * test_marian_int8.c: Marian's int8 (doc/MODELS.md, "Marian's int8"):
 * intgemm8 items of a .bin made here by hand (values, multiplier,
 * padding; the refusals of a multiplier that is zero, negative or not
 * finite, of data cut short, of a wrong type), the alphas (read, and
 * refused when not one positive finite number), Marian's rounding of a
 * value, and its product (lib/kernels/marian_i8.h) against numbers worked
 * out by hand, signed and unsigned, with an alpha and per call, and
 * through an int8 pack made Marian's (wpack_marian, linear_packed).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "import/marian_int8.h"
#include "import/marian_items.h"
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "kernels/marian_i8.h"
#include "run_suite.h"

struct binb {
	uint8_t b[4096];
	size_t n;
};

static void b64(struct binb *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b->b[b->n++] = (uint8_t)(v >> 8 * i);
}

/*
 * One item W of type `type`, shape [2, 3] (Marian's [in, out]), as
 * marian-conv -g intgemm8 writes it (binary.cpp saveItems): its six
 * int8 values (the transpose's, [out, in]), the float qm, padding to
 * `bytes`, of which the header declares `declared`.
 */
static void bin_i8(struct binb *b, uint64_t type, float qm, size_t bytes,
		   size_t declared)
{
	static const int8_t q[6] = { 1, -2, 3, -127, 127, 0 };
	int32_t s[2] = { 2, 3 };
	uint64_t off;

	b->n = 0;
	b64(b, 1);
	b64(b, 1);
	b64(b, 2);		/* "W" and its NUL */
	b64(b, type);
	b64(b, 2);
	b64(b, declared);
	memcpy(b->b + b->n, "W", 2);
	b->n += 2;
	memcpy(b->b + b->n, s, sizeof s);
	b->n += sizeof s;
	off = ((b->n + 8) / 256 + 1) * 256 - b->n - 8;
	b64(b, off);
	memset(b->b + b->n, 0, off);
	b->n += off;
	memset(b->b + b->n, 0, bytes);
	memcpy(b->b + b->n, q, 6);
	if (bytes >= 10)
		memcpy(b->b + b->n + 6, &qm, 4);
	b->n += bytes;
}

START_TEST(intgemm8_items_are_read)
{
	static struct binb b;
	struct marian_items mi;
	const struct marian_item *it;

	bin_i8(&b, 0x4101, 354.84521484375f, 256, 256);
	ck_assert_msg(marian_items_read(&mi, b.b, b.n) == 0, "%s", err_msg());
	it = marian_item(&mi, "W");
	ck_assert(it && it->dtype == MARIAN_INTGEMM8 && it->rank == 2);
	ck_assert(it->shape[0] == 2 && it->shape[1] == 3 && it->count == 6);
	ck_assert(it->intgemm_mult == 354.84521484375f);
	ck_assert_int_eq((int8_t)it->data[0], 1);
	ck_assert_int_eq((int8_t)it->data[3], -127);
	ck_assert_int_eq((int8_t)it->data[4], 127);
	marian_items_free(&mi);
	/* no padding: the values and the multiplier exactly */
	bin_i8(&b, 0x4101, 2.0f, 10, 10);
	ck_assert_msg(marian_items_read(&mi, b.b, b.n) == 0, "%s", err_msg());
	ck_assert(marian_item(&mi, "W")->intgemm_mult == 2.0f);
	marian_items_free(&mi);
}
END_TEST

START_TEST(intgemm8_items_are_refused)
{
	static struct binb b;
	struct marian_items mi;
	const float bad[] = { 0.0f, -1.0f, NAN, INFINITY, -INFINITY };

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		bin_i8(&b, 0x4101, bad[i], 256, 256);
		ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
		ck_assert_msg(strstr(err_msg(), "item W: its intgemm8 "
				     "multiplier"), "%s", err_msg());
	}
	/* the multiplier missing: 6 values declared as the whole data */
	bin_i8(&b, 0x4101, 2.0f, 6, 6);
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "fewer than its shape needs (10)"),
		      "%s", err_msg());
	/* the file cut inside the data */
	bin_i8(&b, 0x4101, 2.0f, 256, 256);
	b.n -= 250;
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "outside the file"), "%s", err_msg());
	/* a declared size far past the file */
	bin_i8(&b, 0x4101, 2.0f, 256, (size_t)1 << 40);
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	/* intgemm16 (0x4102) is not read */
	bin_i8(&b, 0x4102, 2.0f, 256, 256);
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "type 0x4102"), "%s", err_msg());
}
END_TEST

/*
 * An alpha, NAME_QuantMultA: a float32 [1] (or an intgemm8 [1, 1], as
 * marian-conv makes Wemb_QuantMultA: 127 and 127 / alpha, read back as
 * 127 (1 / qm)); absent, 0; zero, negative or not finite, refused.
 */
START_TEST(alphas_are_read_and_refused)
{
	float a = 25.5f, z = 0, nan = NAN, q;
	int8_t i8[5] = { 127 };
	float qm = 127 / 3.0f;
	struct marian_item it = { .name = "W_QuantMultA", .dtype = NPY_F32,
				  .rank = 1, .shape = { 1 }, .count = 1,
				  .data = (const uint8_t *)&a };
	struct marian_items mi = { .n = 1, .it = &it };
	char used[1] = { 0 };

	ck_assert(marian_i8_alpha(&mi, "W", used, &q) == 0);
	ck_assert(q == 25.5f && used[0] == 1);
	ck_assert(marian_i8_alpha(&mi, "V", used, &q) == 0 && q == 0);
	memcpy(i8 + 1, &qm, 4);
	it.dtype = MARIAN_INTGEMM8;
	it.intgemm_mult = qm;
	it.data = (const uint8_t *)i8;
	ck_assert(marian_i8_alpha(&mi, "W", used, &q) == 0);
	ck_assert(q == 127 * (1 / qm));
	it.dtype = NPY_F32;
	it.data = (const uint8_t *)&z;
	ck_assert(marian_i8_alpha(&mi, "W", used, &q) < 0);
	ck_assert_msg(strstr(err_msg(), "W_QuantMultA: the multiplier"), "%s",
		      err_msg());
	it.data = (const uint8_t *)&nan;
	ck_assert(marian_i8_alpha(&mi, "W", used, &q) < 0);
	it.data = (const uint8_t *)&a;
	it.count = 2;			/* not one value */
	ck_assert(marian_i8_alpha(&mi, "W", used, &q) < 0);
}
END_TEST

START_TEST(values_round_as_intgemm)
{
	/* to nearest, ties to even; saturated; -128 never */
	ck_assert_int_eq(marian_quant(0.5f), 0);
	ck_assert_int_eq(marian_quant(1.5f), 2);
	ck_assert_int_eq(marian_quant(-2.5f), -2);
	ck_assert_int_eq(marian_quant(126.6f), 127);
	ck_assert_int_eq(marian_quant(300.0f), 127);
	ck_assert_int_eq(marian_quant(-127.5f), -127);
	ck_assert_int_eq(marian_quant(-300.0f), -127);
	/* cvtps_epi32's out of range and NaN: INT32_MIN, so -127 */
	ck_assert_int_eq(marian_quant(3e9f), -127);
	ck_assert_int_eq(marian_quant(NAN), -127);
	ck_assert(marian_max_abs((const float[]){ 0.5f, -3, 2 }, 3) == 3);
}
END_TEST

/*
 * x = [1, -0.5], alpha 2: xq = [2, -1].  wq = [[3, -4], [127, 0]],
 * qb 4, b = [0.5, -1]: acc = [2*3 + 1*4, 2*127] = [10, 254],
 * u = 1 / 8.  Signed: y = [10/8 + 0.5, 254/8 - 1] = [1.75, 30.75].
 * Unsigned: c = [-1, 127], acc' = acc + 127 c = [-117, 16383],
 * ub = -(63.5 * 31.75) / 127 = -15.875, bias' = c ub + b =
 * [16.375, -2017.125], y = acc' / 8 + bias' = [1.75, 30.75] (every step
 * exact in float).  Without the bias: [1.25, 31.75]; relu of -[...].
 */
START_TEST(product_by_hand)
{
	const float x[2] = { 1, -0.5f }, b[2] = { 0.5f, -1 };
	const int8_t wq[4] = { 3, -4, 127, 0 };
	int32_t c[2];
	float y[2];

	marian_col_sums(c, wq, 2, 2);
	ck_assert(c[0] == -1 && c[1] == 127);
	for (int shift = 0; shift < 3; shift++) {	/* every form */
		ck_assert(marian_i8_ref(y, x, 1, wq, c, 2, 2, 2, 4, b, shift,
					0) == 0);
		ck_assert_msg(y[0] == 1.75f && y[1] == 30.75f, "%d: %g %g",
			      shift, y[0], y[1]);
		ck_assert(marian_i8_ref(y, x, 1, wq, c, 2, 2, 2, 4, NULL,
					shift, 0) == 0);
		ck_assert_msg(y[0] == 1.25f && y[1] == 31.75f, "%d: %g %g",
			      shift, y[0], y[1]);
	}
	/* relu; x negated: y = [-1.25 + 0.5, -31.75 - 1] -> 0 */
	const float xn[2] = { -1, 0.5f };
	ck_assert(marian_i8_ref(y, xn, 1, wq, c, 2, 2, 2, 4, b, 1, 1) == 0);
	ck_assert(y[0] == 0 && y[1] == 0);
}
END_TEST

/*
 * Without an alpha, 127 / max |x| over every row of the call: rows
 * [0.25, -1] and [0.5, 0.5] (max 1, qa 127): xq = [32, -127] (31.75
 * rounds up) and [64, 64] (63.5 to even); w = [1, 1], qb 1:
 * acc = [-95, 128], y = acc (1 / 127), rounded once each.  The second
 * row alone (max 0.5, qa 254): xq = [127, 127], y = 254 / 254 = 1.
 */
START_TEST(product_per_call)
{
	const float x[4] = { 0.25f, -1, 0.5f, 0.5f };
	const int8_t wq[2] = { 1, 1 };
	int32_t c[1] = { 2 };
	float y[2], u = 1.0f / 127.0f;

	ck_assert(marian_i8_ref(y, x, 2, wq, c, 1, 2, 0, 1, NULL, 0, 0) == 0);
	ck_assert(y[0] == -95 * u && y[1] == 128 * u);
	ck_assert(marian_i8_ref(y, x + 2, 1, wq, c, 1, 2, 0, 1, NULL, 0,
				0) == 0);
	ck_assert(y[0] == 254 * (1.0f / 254.0f));
}
END_TEST

/* The form marian_i8_ref takes for kernel set k's unsigned products
 * (shift) or signed ones: intgemm's saturating pairs where the set has
 * an msat (no AVX512_VNNI). */
static int form_of(const struct gemm_i8 *k, int shift)
{
	return !shift ? MARIAN_SIGNED : k && k->msat ? MARIAN_SHIFT_SAT
						     : MARIAN_SHIFT;
}

/* A product's random operands from seed: wq [N, K] in [-127, 127], x [M,
 * K] in [-3.3, 3.3], ws all 1 / 90.5, b [N] in [-2, 2], c wq's column
 * sums. */
static void random_product(unsigned seed, int8_t *wq, float *x, float *ws,
			   float *b, int32_t *c, int M, int N, int K)
{
	srand(seed);
	for (int i = 0; i < N * K; i++)
		wq[i] = (int8_t)(rand() % 255 - 127);
	for (int i = 0; i < M * K; i++)
		x[i] = (float)(rand() % 2001 - 1000) / 300.0f;
	for (int j = 0; j < N; j++) {
		ws[j] = 1 / 90.5f;
		b[j] = (float)(rand() % 200 - 100) / 50.0f;
	}
	marian_col_sums(c, wq, N, K);
}

/* An int8 pack made Marian's gives marian_i8_ref's bits with each int8
 * kernel set of this CPU; a multiplier that is not finite is refused. */
START_TEST(pack_routes_to_the_reference)
{
	enum { M = 5, N = 37, K = 70 };
	static int8_t wq[N * K];
	static float ws[N], x[M * K], b[N], y[M * N], want[M * N];
	static int32_t c[N];
	struct wpack w;

	random_product(4, wq, x, ws, b, c, M, N, K);
	ck_assert(wpack_init_i8(&w, wq, ws, N, K) == 0);
	ck_assert(wpack_marian(&w, 25.5f, 90.5f, WPACK_MARIAN_SHIFT) == 0);
	ck_assert(linear_packed(y, x, M, &w, b, 0) == 0);
	ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 25.5f, 90.5f, b,
				form_of(w.i8, 1), 0) == 0);
	ck_assert(memcmp(y, want, sizeof y) == 0);
	/* every kernel set this CPU runs (one panel layout serves all),
	 * with the per-call multiplier and relu */
	const struct gemm_i8 *set[KERN_I8_MAX];
	const char *sname[KERN_I8_MAX];
	const struct gemm_i8 *mine = w.i8;
	int nset = kern_i8_all(set, sname);
	w.mqa = 0;
	for (int k = 0; mine && k < nset; k++) {
		w.i8 = set[k];
		ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 0, 90.5f, b,
					form_of(set[k], 1), 1) == 0);
		ck_assert(linear_packed(y, x, M, &w, b, 1) == 0);
		ck_assert_msg(memcmp(y, want, sizeof y) == 0, "%s", sname[k]);
	}
	w.i8 = mine;
	w.mqa = 25.5f;
	/* no bias: int8shift's products without one are signed */
	ck_assert(linear_packed(y, x, M, &w, NULL, 0) == 0);
	ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 25.5f, 90.5f, NULL,
				0, 0) == 0);
	ck_assert(memcmp(y, want, sizeof y) == 0);
	ck_assert(wpack_marian(&w, NAN, 90.5f, 0) < 0);
	ck_assert(wpack_marian(&w, 1, 0, 0) < 0);
	wpack_free(&w);
}
END_TEST

/*
 * The kernels' quantisation of x (struct gemm_i8's mquant) at marian_quant's
 * edges, in every int8 set of this CPU against marian_i8_ref (scalar
 * marian_quant): alpha 2, so x 1.25, 1.75 and -1.25 are ties (2.5 -> 2,
 * 3.5 -> 4, -2.5 -> -2; 63.75 and -63.75: 127.5 -> 128 -> 127 and
 * -127.5 -> -128 -> -127); beyond 127, beyond 200 and beyond 2^31 either
 * way; NaN and the infinities (-127); 7 rows (a strip cut short) of 37
 * (a quad and a vector cut short).
 */
START_TEST(quantisation_edges_in_every_set)
{
	enum { M = 7, N = 19, K = 37 };
	static int8_t wq[N * K];
	static float ws[N], x[M * K], y[M * N], want[M * N];
	static int32_t c[N];
	const float edge[] = { 1.25f, 1.75f, -1.25f, 63.4f, 63.6f, -64,
			       99, -150, 2e9f, -2e9f, NAN, INFINITY,
			       -INFINITY, 0, -0.0f, 0.2f, 63.75f, -63.75f };
	const int nedge = sizeof(edge) / sizeof(edge[0]);
	const struct gemm_i8 *set[KERN_I8_MAX];
	const char *sname[KERN_I8_MAX];
	struct wpack w;
	int nset = kern_i8_all(set, sname);

	srand(9);
	for (int i = 0; i < N * K; i++)
		wq[i] = (int8_t)(rand() % 255 - 127);
	for (int i = 0; i < M * K; i++)
		x[i] = i % 3 ? edge[rand() % nedge] :
		       (float)(rand() % 2001 - 1000) / 7.0f;
	for (int j = 0; j < N; j++)
		ws[j] = 1 / 90.5f;
	marian_col_sums(c, wq, N, K);
	ck_assert(wpack_init_i8(&w, wq, ws, N, K) == 0);
	ck_assert(wpack_marian(&w, 2, 90.5f, WPACK_MARIAN_SHIFT) == 0);
	ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 2, 90.5f, NULL, 0,
				0) == 0);
	for (int k = 0; w.i8 && k < nset; k++) {
		w.i8 = set[k];
		ck_assert(linear_packed(y, x, M, &w, NULL, 0) == 0);
		ck_assert_msg(memcmp(y, want, sizeof y) == 0, "%s", sname[k]);
	}
	/* the unsigned form (int8shiftAll) in the set's way, each set's
	 * quantisation into the bytes q + 127 where it saturates */
	ck_assert(wpack_marian(&w, 2, 90.5f, WPACK_MARIAN_SHIFT_ALL) == 0);
	for (int k = 0; w.i8 && k < nset; k++) {
		w.i8 = set[k];
		ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 2, 90.5f,
					NULL, form_of(set[k], 1), 0) == 0);
		ck_assert(linear_packed(y, x, M, &w, NULL, 0) == 0);
		ck_assert_msg(memcmp(y, want, sizeof y) == 0, "%s", sname[k]);
	}
	wpack_free(&w);
}
END_TEST

/* Rows of many strips, the last cut short, at a K whose strips pass L1:
 * every set against marian_i8_ref in both forms, the per-call
 * multiplier the whole call's. */
START_TEST(rows_in_blocks)
{
	enum { M = 101, N = 19, K = 4000 };
	static int8_t wq[N * K];
	static float ws[N], x[M * K], b[N], y[M * N], want[M * N];
	static int32_t c[N];
	const struct gemm_i8 *set[KERN_I8_MAX];
	const char *sname[KERN_I8_MAX];
	int nset = kern_i8_all(set, sname);
	struct wpack w;

	random_product(11, wq, x, ws, b, c, M, N, K);
	ck_assert(wpack_init_i8(&w, wq, ws, N, K) == 0);
	for (int shift = 0; shift < 2; shift++) {
		ck_assert(wpack_marian(&w, 0, 90.5f, shift ?
				       WPACK_MARIAN_SHIFT_ALL : 0) == 0);
		for (int k = 0; w.i8 && k < nset; k++) {
			w.i8 = set[k];
			ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 0,
						90.5f, b, form_of(set[k], shift),
						0) == 0);
			ck_assert(linear_packed(y, x, M, &w, b, 0) == 0);
			ck_assert_msg(memcmp(y, want, sizeof y) == 0,
				      "%s shift %d", sname[k], shift);
		}
	}
	wpack_free(&w);
}
END_TEST

/*
 * Sums beyond 2^24, where the kernels' (float)acc has rounded: summed
 * again exactly.  Unsigned form, K 1102, wq all 127, x 1 but the last
 * (0), alpha 127 (xq 127 and 0), qb 2: acc = 127^2 1101 = 17758029
 * (odd, beyond 2^24: as a float 17758028), c = 127 1102 = 139954,
 * acc' = acc + 127 c = 35532187, which rounds to 35532188 as a float
 * (from the rounded acc, 35532186, it would be 35532184); u = 1 / 254,
 * ub = -(1 (127 / 2)) / 127 = -0.5: y = fma(35532188, u, -69977).
 */
START_TEST(large_sums_are_exact)
{
	enum { M = 1, N = 2, K = 1102 };
	static int8_t wq[N * K];
	static float ws[N], x[M * K], y[M * N], want[M * N];
	static int32_t c[N];
	struct wpack w;

	memset(wq, 127, sizeof wq);
	for (int j = 0; j < N; j++)
		ws[j] = 1;
	for (int k = 0; k < K; k++)
		x[k] = k < K - 1;
	marian_col_sums(c, wq, N, K);
	ck_assert(c[0] == 139954);
	ck_assert(wpack_init_i8(&w, wq, ws, N, K) == 0);
	ck_assert(wpack_marian(&w, 127, 2, WPACK_MARIAN_SHIFT_ALL) == 0);
	ck_assert(linear_packed(y, x, M, &w, NULL, 0) == 0);
	ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 127, 2, NULL,
				MARIAN_SHIFT, 0) == 0);
	float v = fmaf(35532188.0f, 1.0f / 254.0f, -69977.0f);
	ck_assert_msg(want[0] == v && want[1] == v, "%.9g %.9g", want[0], v);
	/* with intgemm's saturating pairs: every pair, 2 254 127 and the
	 * last 254 127 + 127 127, is 32767, acc' = 551 32767 = 18054617
	 * (odd, beyond 2^24) */
	float vs = fmaf((float)18054617, 1.0f / 254.0f, -69977.0f);
	ck_assert(marian_i8_ref(want, x, M, wq, c, N, K, 127, 2, NULL,
				MARIAN_SHIFT_SAT, 0) == 0);
	ck_assert_msg(want[0] == vs && want[1] == vs, "%.9g %.9g", want[0],
		      vs);
	const struct gemm_i8 *set[KERN_I8_MAX];
	const char *sname[KERN_I8_MAX];
	int nset = kern_i8_all(set, sname);
	for (int k = 0; w.i8 && k < nset; k++) {
		float e = set[k]->msat ? vs : v;
		w.i8 = set[k];
		ck_assert(linear_packed(y, x, M, &w, NULL, 0) == 0);
		ck_assert_msg(y[0] == e && y[1] == e, "%s: %.9g %.9g",
			      sname[k], y[0], e);
	}
	ck_assert(w.i8 || y[0] == v);	/* the reference: exact */
	wpack_free(&w);
}
END_TEST

/*
 * intgemm's pairs on a CPU without AVX512_VNNI, by hand: qa 127 (x 1 ->
 * 127, -1 -> -127), qb 1; column 0: wq {127, 127, 127, -1}, pairs
 * 254 127 2 = 64516 -> 32767 and 0 127 + 127 -1 = -127, acc' = 32640,
 * c = 380; column 1: {-127, -127, 0, 0}, -64516 -> -32768, c = -254.
 * u = 1 / 127, ub = -1.  Exact (AVX512_VNNI): acc + 127 c = 64389 and
 * -64516.  Every set whose Marian products saturate gives the first,
 * the others the second; marian_i8_ref either by its form.
 */
START_TEST(pairs_saturate_as_intgemm)
{
	enum { N = 2, K = 4 };
	static const int8_t wq[N * K] = { 127, 127, 127, -1,
					  -127, -127, 0, 0 };
	static const float x[K] = { 1, 1, -1, 0 }, ws[N] = { 1, 1 };
	float y[N], sat[N], ex[N], u = 1.0f / 127.0f;
	int32_t c[N];
	const struct gemm_i8 *set[KERN_I8_MAX];
	const char *sname[KERN_I8_MAX];
	int nset = kern_i8_all(set, sname);
	struct wpack w;

	marian_col_sums(c, wq, N, K);
	ck_assert(c[0] == 380 && c[1] == -254);
	sat[0] = (float)32640 * u + (float)380 * -1.0f;
	sat[1] = (float)-32768 * u + (float)-254 * -1.0f;
	ex[0] = (float)64389 * u + (float)380 * -1.0f;
	ex[1] = (float)-64516 * u + (float)-254 * -1.0f;
	ck_assert(marian_i8_ref(y, x, 1, wq, c, N, K, 127, 1, NULL,
				MARIAN_SHIFT_SAT, 0) == 0);
	ck_assert(y[0] == sat[0] && y[1] == sat[1]);
	ck_assert(marian_i8_ref(y, x, 1, wq, c, N, K, 127, 1, NULL,
				MARIAN_SHIFT, 0) == 0);
	ck_assert(y[0] == ex[0] && y[1] == ex[1]);
	ck_assert(wpack_init_i8(&w, wq, ws, N, K) == 0);
	ck_assert(wpack_marian(&w, 127, 1, WPACK_MARIAN_SHIFT_ALL) == 0);
	for (int k = 0; w.i8 && k < nset; k++) {
		const float *e = set[k]->msat ? sat : ex;
		w.i8 = set[k];
		ck_assert(linear_packed(y, x, 1, &w, NULL, 0) == 0);
		ck_assert_msg(y[0] == e[0] && y[1] == e[1],
			      "%s: %.9g %.9g, want %.9g %.9g", sname[k], y[0],
			      y[1], e[0], e[1]);
	}
	wpack_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("marian_int8");
	TCase *tc = tcase_create("marian_int8");

	tcase_add_test(tc, intgemm8_items_are_read);
	tcase_add_test(tc, intgemm8_items_are_refused);
	tcase_add_test(tc, alphas_are_read_and_refused);
	tcase_add_test(tc, values_round_as_intgemm);
	tcase_add_test(tc, product_by_hand);
	tcase_add_test(tc, product_per_call);
	tcase_add_test(tc, pack_routes_to_the_reference);
	tcase_add_test(tc, quantisation_edges_in_every_set);
	tcase_add_test(tc, large_sums_are_exact);
	tcase_add_test(tc, pairs_saturate_as_intgemm);
	tcase_add_test(tc, rows_in_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
