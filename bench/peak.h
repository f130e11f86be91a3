/*
 * peak.h: the machine's FMA peak, measured: independent FMAs in registers
 * (12 chains: latency 4 x 2 pipes needs 8; c = c a + b stays bounded with
 * a < 1), in AVX2 and AVX-512, for the benches that print their figures
 * as fractions of it; and the int8 peak of the int8 kernels' instruction.
 * A benchmark is one file, hence static.
 */
#ifndef ATTN_BENCH_PEAK_H
#define ATTN_BENCH_PEAK_H

#include <immintrin.h>
#include <string.h>
#include <time.h>

#include "kernels/kernels.h"

#define PEAK_ITERS 2000000L

__attribute__((target("avx2,fma"), unused))
static float fma_loop_avx2(long n)
{
	__m256 c[12], a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
	for (int i = 0; i < 12; i++)
		c[i] = _mm256_set1_ps((float)i);
	for (long k = 0; k < n; k++)
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			c[i] = _mm256_fmadd_ps(c[i], a, b);
	for (int i = 1; i < 12; i++)
		c[0] = _mm256_add_ps(c[0], c[i]);
	return _mm256_cvtss_f32(c[0]);
}

__attribute__((target("avx512f"), unused))
static float fma_loop_avx512(long n)
{
	__m512 c[12], a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
	for (int i = 0; i < 12; i++)
		c[i] = _mm512_set1_ps((float)i);
	for (long k = 0; k < n; k++)
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			c[i] = _mm512_fmadd_ps(c[i], a, b);
	for (int i = 1; i < 12; i++)
		c[0] = _mm512_add_ps(c[0], c[i]);
	return _mm512_reduce_add_ps(c[0]);
}

static volatile float bench_peak_sink;	/* the loops' results, unused */

/*
 * ops a call of loop(PEAK_ITERS) does, over its seconds of this thread's
 * CPU time, in G/s: the best of five runs, for the machine may be shared.
 */
__attribute__((unused))
static double bench_peak_rate(float (*loop)(long), double ops)
{
	double best = 0;

	for (int r = 0; r < 5; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		bench_peak_sink = loop(PEAK_ITERS);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		double t = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) *
			   1e-9;
		best = ops / t * 1e-9 > best ? ops / t * 1e-9 : best;
	}
	return best;
}

/*
 * The FMA peak of one thread in GFLOP/s for the kernels in force
 * (kern_isa(): AVX-512's, else AVX2's, which the reference's figures
 * are held against too; 0 without AVX2).
 */
__attribute__((unused))
static double bench_fma_peak(void)
{
	int avx512 = kern_isa() == ISA_AVX512;

	if (!avx512 && !(__builtin_cpu_supports("avx2") &&
			 __builtin_cpu_supports("fma")))
		return 0;
	return bench_peak_rate(avx512 ? fma_loop_avx512 : fma_loop_avx2,
			       PEAK_ITERS * 12.0 * 2 * (avx512 ? 16 : 8));
}

/*
 * The int8 peak of one thread in GOP/s (a multiply-add two operations),
 * of the instruction an int8 kernel of kern_i8_all is built on: vpdpbusd
 * (64 multiply-adds on zmm, 32 on ymm) for "avx512-vnni vpdpbusd" and
 * "avx-vnni vpdpbusd", and for "avx2 vpmaddwd" (which widens int8 to
 * int16) vpmaddwd and the vpaddd that keeps its sums, 16 multiply-adds
 * a pair; for "avx2 vpmaddubsw u7" and "avx512bw vpmaddubsw u7" (7-bit
 * x) vpmaddubsw, vpmaddwd by ones and vpaddd, 32 and 64 a triple.  0 for
 * another name.  (The loops return their sums as float,
 * the type bench_peak_rate takes.)
 */
__attribute__((target("avx512f,avx512vnni"), unused))
static float i8_loop_avx512vnni(long n)
{
	__m512i c[12], a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
	for (int i = 0; i < 12; i++)
		c[i] = _mm512_set1_epi32(i);
	for (long k = 0; k < n; k++)
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			c[i] = _mm512_dpbusd_epi32(c[i], a, b);
	for (int i = 1; i < 12; i++)
		c[0] = _mm512_add_epi32(c[0], c[i]);
	return (float)_mm512_reduce_add_epi32(c[0]);
}

__attribute__((target("avx2,avxvnni"), unused))
static float i8_loop_avxvnni(long n)
{
	__m256i c[12], a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
	for (int i = 0; i < 12; i++)
		c[i] = _mm256_set1_epi32(i);
	for (long k = 0; k < n; k++)
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			c[i] = _mm256_dpbusd_avx_epi32(c[i], a, b);
	for (int i = 1; i < 12; i++)
		c[0] = _mm256_add_epi32(c[0], c[i]);
	return (float)_mm256_extract_epi32(c[0], 0);
}

/*
 * vpmaddwd and vpaddd (16 multiply-adds), and for the 7-bit kernels
 * vpmaddubsw, vpmaddwd by ones and vpaddd (32), on 12 accumulators, in
 * asm: with intrinsics on loop-invariant operands gcc computed the
 * product once, before the loop, and timed the vpaddd alone.
 */
#define PEAK_R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
	X(10) X(11)
#define PEAK_MADD(i) "vpmaddwd %%ymm12, %%ymm13, %%ymm14\n\t" \
	"vpaddd %%ymm14, %%ymm" #i ", %%ymm" #i "\n\t"
#define PEAK_UBS(V, i) "vpmaddubsw %%" V "12, %%" V "13, %%" V "14\n\t" \
	"vpmaddwd %%" V "15, %%" V "14, %%" V "14\n\t" \
	"vpaddd %%" V "14, %%" V #i ", %%" V #i "\n\t"
#define PEAK_UBS_Y(i) PEAK_UBS("ymm", i)
#define PEAK_UBS_Z(i) PEAK_UBS("zmm", i)
#define PEAK_I8_LOOP(name, body, setup) \
__attribute__((unused)) static float name(long n) \
{ \
	__asm__ volatile(setup "1:\n\t" PEAK_R12(body) \
			 "dec %0\n\tjnz 1b" : "+r"(n) : : "xmm0", "xmm1", \
			 "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
			 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
			 "xmm13", "xmm14", "xmm15", "cc"); \
	return 0; \
}
PEAK_I8_LOOP(i8_loop_avx2, PEAK_MADD,
	     "vpcmpeqw %%ymm12, %%ymm12, %%ymm12\n\t"
	     "vpabsw %%ymm12, %%ymm13\n\t")
PEAK_I8_LOOP(i8_loop_avx2_u7, PEAK_UBS_Y,
	     "vpcmpeqw %%ymm15, %%ymm15, %%ymm15\n\t"
	     "vpabsw %%ymm15, %%ymm15\n\t"
	     "vpabsb %%ymm15, %%ymm12\n\tvmovdqa %%ymm15, %%ymm13\n\t")
PEAK_I8_LOOP(i8_loop_avx512bw_u7, PEAK_UBS_Z,
	     "vpternlogd $0xff, %%zmm15, %%zmm15, %%zmm15\n\t"
	     "vpabsw %%zmm15, %%zmm15\n\t"
	     "vmovdqa64 %%zmm15, %%zmm12\n\tvmovdqa64 %%zmm15, %%zmm13\n\t")

__attribute__((unused))
static double bench_i8_peak(const char *name)
{
	if (strcmp(name, "avx512bw vpmaddubsw u7") == 0)
		return bench_peak_rate(i8_loop_avx512bw_u7,
				       PEAK_ITERS * 12.0 * 2 * 64);
	if (strcmp(name, "avx2 vpmaddubsw u7") == 0)
		return bench_peak_rate(i8_loop_avx2_u7,
				       PEAK_ITERS * 12.0 * 2 * 32);
	int which = strcmp(name, "avx512-vnni vpdpbusd") == 0 ? 64
		  : strcmp(name, "avx-vnni vpdpbusd") == 0 ? 32
		  : strcmp(name, "avx2 vpmaddwd") == 0 ? 16 : 0;

	if (!which)
		return 0;
	return bench_peak_rate(which == 64 ? i8_loop_avx512vnni :
			       which == 32 ? i8_loop_avxvnni : i8_loop_avx2,
			       PEAK_ITERS * 12.0 * 2 * which);
}

#endif
