/*
 * test_kern.c: the thread pool, and the element-wise, row-wise and GRU
 * kernels against double-precision formulas written here, for every
 * instruction set of the machine; backward kernels against central
 * differences of those double formulas (step 1e-4 in double: truncation
 * and rounding far below the float tolerances).  Each tolerance is a
 * bound on float rounding derived from the arithmetic, stated beside it.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

#define H_FD 1e-4

/* Sizes that are 1, odd, and not multiples of 8 or 16. */
static const int sizes[] = { 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

/* ---- thread pool -------------------------------------------------------- */

struct cover { _Atomic int *hits; int nested; };

static void cover_task(void *ctx, int64_t lo, int64_t hi)
{
	struct cover *c = ctx;
	for (int64_t i = lo; i < hi; i++) {
		if (c->nested) {
			/* Runs serially inside: must still cover exactly. */
			struct cover inner = { c->hits + 1000 * (i + 1), 0 };
			kern_parallel_for(1000, 1, cover_task, &inner);
		}
		atomic_fetch_add(&c->hits[i], 1);
	}
}

START_TEST(test_parallel_for)
{
	static const int64_t ns[] = { 1, 2, 7, 100, 1001, 100000 };
	_Atomic int *hits = calloc(1001 * 1000 + 1000, sizeof(*hits));
	ck_assert_ptr_nonnull(hits);
	for (int t = 1; t <= 4; t++) {
		kern_set_threads(t);
		ck_assert_int_eq(kern_threads(), t);
		for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
			for (int64_t grain = 1; grain <= 64; grain *= 8) {
				memset(hits, 0, sizeof(*hits) * ns[k]);
				struct cover c = { hits, 0 };
				kern_parallel_for(ns[k], grain, cover_task, &c);
				int64_t bad = 0;
				for (int64_t i = 0; i < ns[k]; i++)
					bad += hits[i] != 1;
				ck_assert_int_eq(bad, 0);
			}
		memset(hits, 0, sizeof(*hits) * (1001 * 1000 + 1000));
		struct cover c = { hits, 1 };
		kern_parallel_for(7, 1, cover_task, &c);
		int64_t bad = 0;
		for (int64_t i = 0; i < 1000 * 8; i++)
			bad += hits[i] != (i < 7 || i >= 1000);
		ck_assert_int_eq(bad, 0);
	}
	free(hits);
	kern_set_threads(2);
}
END_TEST

/* Each call's range, and that each index was run once. */
struct each { _Atomic int *hits; _Atomic int calls, wide; };

static void each_task(void *ctx, int64_t lo, int64_t hi)
{
	struct each *e = ctx;

	atomic_fetch_add(&e->calls, 1);
	if (hi - lo != 1)
		atomic_fetch_add(&e->wide, 1);
	for (int64_t i = lo; i < hi; i++)
		atomic_fetch_add(&e->hits[i], 1);
}

/* kern_parallel_each: on more than one thread every index is a call of
 * its own (kern_parallel_for would give 15 tasks on 2 threads in chunks
 * of 2, leaving one thread the last two); on one thread a single call. */
START_TEST(test_parallel_each)
{
	static const int64_t ns[] = { 1, 2, 3, 15, 100 };
	_Atomic int hits[100];

	for (int t = 1; t <= 3; t++) {
		kern_set_threads(t);
		for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			struct each e = { hits, 0, 0 };
			memset(hits, 0, sizeof hits);
			kern_parallel_each(ns[k], each_task, &e);
			int64_t bad = 0;
			for (int64_t i = 0; i < ns[k]; i++)
				bad += hits[i] != 1;
			ck_assert_int_eq(bad, 0);
			ck_assert_int_eq(e.calls, t == 1 ? 1 : ns[k]);
			ck_assert_int_eq(e.wide, t == 1 && ns[k] > 1);
		}
	}
	kern_set_threads(2);
}
END_TEST

/* Two threads of the program calling at once: each call completes. */
static void *caller(void *arg)
{
	_Atomic int *hits = arg;
	struct cover c = { hits, 0 };
	for (int r = 0; r < 50; r++)
		kern_parallel_for(1000, 1, cover_task, &c);
	return NULL;
}

START_TEST(test_two_callers)
{
	static _Atomic int hits[2][1000];
	pthread_t t[2];
	kern_set_threads(3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, caller, hits[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int bad = 0;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 1000; j++)
			bad += hits[i][j] != 50;
	ck_assert_int_eq(bad, 0);
}
END_TEST

/* A child of fork, which has none of the parent's workers, still gets its
 * parallel work done. */
START_TEST(test_fork)
{
	kern_set_threads(2);
	static _Atomic int hits[1000];
	struct cover c = { hits, 0 };
	kern_parallel_for(1000, 1, cover_task, &c);     /* the pool runs */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(hits, 0, sizeof(hits));
		kern_parallel_for(1000, 1, cover_task, &c);
		int bad = 0;
		for (int i = 0; i < 1000; i++)
			bad += hits[i] != 1;
		_exit(bad != 0);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* Idle workers sleep: after a job they spin for at most SPIN_NS (50 us,
 * threadpool.c), so 200 ms without jobs costs the process next to no CPU
 * time.  A pool whose workers kept spinning would spend 200 ms of CPU for
 * each of its three workers. */
static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

START_TEST(test_idle_sleeps)
{
	static _Atomic int hits[1000];
	struct cover c = { hits, 0 };
	kern_set_threads(4);
	for (int r = 0; r < 10; r++)
		kern_parallel_for(1000, 1, cover_task, &c);
	double t0 = cpu_seconds();
	struct timespec idle = { 0, 200000000 };
	nanosleep(&idle, NULL);
	double spent = cpu_seconds() - t0;
	ck_assert_msg(spent < 0.05, "an idle pool used %.3f s of CPU in 0.2 s",
		      spent);
	kern_set_threads(2);
}
END_TEST

/* ---- exp, tanh, sigmoid ------------------------------------------------- */

/* Relative error bounds of the vector functions (doc/kernels.md gives the
 * measured maxima; these are those rounded up), plus FLT_MIN absolute for
 * results in the subnormal range, which may be flushed to zero. */
#define EXP_REL (3 * KT_U)
#define TANH_REL (8 * KT_U)
#define SIGMOID_REL (5 * KT_U)

static double sigmoid_d(double x) { return 1 / (1 + exp(-x)); }

static void check_fn(const char *what, void (*f)(float *, const float *, size_t),
		     double (*ref)(double), double rel, double lo, double hi)
{
	static const float special[] = {
		0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, 88.7f, 88.72f, 89, -87.3f,
		-88, -103, -104, -1000, 1000, 50, -50, 9, -9, 20, -20,
		INFINITY, -INFINITY, NAN,
	};
	size_t ns = sizeof(special) / sizeof(special[0]);
	size_t n = 100003 + ns;         /* odd: every tail length */
	float *x = kt_zeros(n), *y = kt_zeros(n);
	double *want = kt_dzeros(n), *tol = kt_dzeros(n);

	for (size_t i = 0; i < n - ns; i++)
		x[i] = (float)(lo + (hi - lo) * i / (n - ns));
	memcpy(x + n - ns, special, sizeof(special));
	for (size_t i = 0; i < n; i++) {
		want[i] = ref(x[i]);
		if (isfinite(want[i]) && fabs(want[i]) > FLT_MAX)
			want[i] = INFINITY;
		tol[i] = rel * fabs(want[i]) + FLT_MIN;
	}
	for (size_t len = 0; len < 40; len++) {   /* short calls: tails */
		f(y, x + n - ns - 20, len);
		kt_check(what, y, want + n - ns - 20, tol + n - ns - 20, 0, len);
	}
	f(y, x, n);
	kt_check(what, y, want, tol, 0, n);
	memcpy(y, x, n * sizeof(float));
	f(y, y, n);                     /* in place */
	kt_check(what, y, want, tol, 0, n);
	free(x);
	free(y);
	free(want);
	free(tol);
}

START_TEST(test_vmath)
{
	int isa[3], n = kt_isas(isa);
	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		check_fn("vexp", vexp, exp, EXP_REL, -104, 89);
		check_fn("vtanh", vtanh, tanh, TANH_REL, -12, 12);
		check_fn("vsigmoid", vsigmoid, sigmoid_d, SIGMOID_REL, -40, 40);
	}
}
END_TEST

/* ---- bias, relu --------------------------------------------------------- */

START_TEST(test_bias_relu)
{
	int isa[3], ni = kt_isas(isa);
	kt_seed(3);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 0; s < NSIZES; s++) {
			int n = sizes[s], rows = kt_int(1, 9);
			size_t N = (size_t)rows * n;
			float *x = kt_rand(N, -1, 1), *b = kt_rand(n, -1, 1);
			float *db = kt_rand(n, -1, 1), *y = kt_zeros(N);
			float *dx = kt_rand(N, -1, 1);
			double *want = kt_dzeros(N), *tol = kt_dzeros(N);
			/* one rounded addition */
			for (size_t i = 0; i < N; i++) {
				want[i] = (double)x[i] + b[i % n];
				tol[i] = KT_U * fabs(want[i]);
			}
			bias_forward(x, b, rows, n);
			kt_check("bias_forward", x, want, tol, 0, N);
			/* rows + 1 terms summed: gamma(rows) sum |.| */
			for (int i = 0; i < n; i++) {
				double s = db[i], m = fabs(db[i]);
				for (int r = 0; r < rows; r++) {
					s += x[r * n + i];
					m += fabs(x[r * n + i]);
				}
				want[i] = s;
				tol[i] = (rows + 1) * KT_U * m;
			}
			bias_backward(db, x, rows, n);
			kt_check("bias_backward", db, want, tol, 0, n);
			/* relu: exact */
			for (size_t i = 0; i < N; i++)
				want[i] = x[i] > 0 ? x[i] : 0;
			relu_forward(y, x, N);
			kt_check("relu_forward", y, want, NULL, 0, N);
			float *dy = kt_rand(N, -1, 1);
			for (size_t i = 0; i < N; i++) {
				want[i] = (double)dx[i] + (y[i] > 0 ? dy[i] : 0);
				tol[i] = KT_U * fabs(want[i]);
			}
			relu_backward(dx, dy, y, N);
			kt_check("relu_backward", dx, want, tol, 0, N);
			free(dy);
			free(x); free(b); free(db); free(y); free(dx);
			free(want); free(tol);
		}
	}
}
END_TEST

/* ---- softmax ------------------------------------------------------------ */

static void softmax_d(double *y, const double *x, int n, int log_)
{
	double m = -INFINITY, s = 0;
	for (int i = 0; i < n; i++)
		m = fmax(m, x[i]);
	for (int i = 0; i < n; i++)
		s += exp(x[i] - m);
	for (int i = 0; i < n; i++)
		y[i] = log_ ? x[i] - m - log(s) : exp(x[i] - m) / s;
}

/* L = sum w * softmax(x): its gradient by central differences. */
static double softmax_loss(const double *x, const float *w, int n)
{
	double y[300], L = 0;
	softmax_d(y, x, n, 0);
	for (int i = 0; i < n; i++)
		L += w[i] * y[i];
	return L;
}

START_TEST(test_softmax)
{
	int isa[3], ni = kt_isas(isa);
	kt_seed(4);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 0; s < NSIZES; s++) {
			int n = sizes[s], rows = kt_int(1, 5);
			size_t N = (size_t)rows * n;
			float *x = kt_rand(N, -8, 8), *y = kt_zeros(N);
			float *dx = kt_rand(N, -1, 1), *w = kt_rand(N, -1, 1);
			double *want = kt_dzeros(N), *tol = kt_dzeros(N);
			double xd[300], yd[300];
			/*
			 * Each output goes through n additions, an exp and a
			 * division: relative (n + 8) u plus the exp's bound
			 * (also the log's, as an absolute error of the
			 * log-sum-exp, for log-softmax).
			 */
			for (int r = 0; r < rows; r++) {
				for (int i = 0; i < n; i++)
					xd[i] = x[r * n + i];
				softmax_d(yd, xd, n, 0);
				for (int i = 0; i < n; i++) {
					want[r * n + i] = yd[i];
					tol[r * n + i] = ((n + 8) * KT_U + EXP_REL) * yd[i];
				}
			}
			softmax_rows(y, x, rows, n);
			kt_check("softmax_rows", y, want, tol, 0, N);
			for (int r = 0; r < rows; r++) {
				double m = 0;
				for (int i = 0; i < n; i++) {
					xd[i] = x[r * n + i];
					m = fmax(m, fabs(xd[i]));
				}
				softmax_d(yd, xd, n, 1);
				for (int i = 0; i < n; i++) {
					want[r * n + i] = yd[i];
					tol[r * n + i] = ((n + 8) * KT_U + EXP_REL) *
							 (4 * m + log(n) + 1);
				}
			}
			float *ly = kt_zeros(N);
			log_softmax_rows(ly, x, rows, n);
			kt_check("log_softmax_rows", ly, want, tol, 0, N);
			memcpy(ly, x, N * sizeof(float));
			log_softmax_rows(ly, ly, rows, n);      /* in place */
			kt_check("log_softmax_rows in place", ly, want, tol, 0, N);
			free(ly);
			/*
			 * Backward against central differences of L = sum w y.
			 * dx = y (w - sum w y): the float y (error above) and
			 * n further roundings, relative to y (|w| + sum |w y|).
			 */
			for (int r = 0; r < rows; r++) {
				double sw = 0;
				for (int i = 0; i < n; i++) {
					xd[i] = x[r * n + i];
					sw += fabs(w[r * n + i] * y[r * n + i]);
				}
				for (int i = 0; i < n; i++) {
					double keep = xd[i];
					xd[i] = keep + H_FD;
					double lp = softmax_loss(xd, w + r * n, n);
					xd[i] = keep - H_FD;
					double lm = softmax_loss(xd, w + r * n, n);
					xd[i] = keep;
					size_t k = (size_t)r * n + i;
					want[k] = dx[k] + (lp - lm) / (2 * H_FD);
					tol[k] = KT_U * fabs(want[k]) + 1e-9 +
						 2 * ((n + 8) * KT_U + EXP_REL) * y[k] *
						 (fabs(w[k]) + sw);
				}
			}
			softmax_backward(dx, w, y, rows, n);
			kt_check("softmax_backward", dx, want, tol, 0, N);
			free(x); free(y); free(dx); free(w); free(want); free(tol);
		}
		/* A fully masked row: zeros, and -inf for the log. */
		float x[3] = { -INFINITY, -INFINITY, -INFINITY }, y[3];
		double z[3] = { 0, 0, 0 }, ninf[3] = { -INFINITY, -INFINITY, -INFINITY };
		softmax_rows(y, x, 1, 3);
		kt_check("softmax of -inf", y, z, NULL, 0, 3);
		log_softmax_rows(y, x, 1, 3);
		kt_check("log_softmax of -inf", y, ninf, NULL, 0, 3);
		/* Large logits neither overflow nor underflow to NaN. */
		float big[2] = { 1000, 0 };
		double bw[2] = { 1, 0 };
		softmax_rows(y, big, 1, 2);
		kt_check("softmax of 1000", y, bw, NULL, 0, 2);
	}
}
END_TEST

START_TEST(test_softmax_nan)
{
	/* A NaN anywhere in a row (either half of a 16-float step, or the
	 * tail) makes the whole row NaN, as the reference's max does, in a
	 * row of numbers and in one of -inf (where a maximum that lost the
	 * NaN would say "all masked"); a row of -inf is zeros, or -inf in
	 * log-softmax; the other rows keep finite values. */
	static const int ns[] = { 5, 16, 23, 40 };
	int isa[3], ni = kt_isas(isa);

	kt_seed(9);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
			int n = ns[k];
			float *x = kt_rand((size_t)4 * n, -8, 8);
			float *y = kt_zeros((size_t)4 * n);

			for (int i = 0; i < n; i++)
				x[2 * n + i] = x[3 * n + i] = -INFINITY;
			for (int p = 0; p < n; p++) {
				x[p] = x[3 * n + p] = NAN;
				for (int lg = 0; lg < 2; lg++) {
					if (lg)
						log_softmax_rows(y, x, 4, n);
					else
						softmax_rows(y, x, 4, n);
					for (int i = 0; i < n; i++) {
						ck_assert_msg(isnan(y[i]) &&
							      isnan(y[3 * n + i]),
							      "isa %d, n %d, NaN "
							      "at %d: y[%d] = %g, "
							      "%g", isa[ii], n, p,
							      i, y[i],
							      y[3 * n + i]);
						ck_assert(isfinite(y[n + i]));
						ck_assert(lg ? y[2 * n + i] ==
							  -INFINITY :
							  y[2 * n + i] == 0);
					}
				}
				x[p] = (float)p / n;
				x[3 * n + p] = -INFINITY;
			}
			free(x);
			free(y);
		}
	}
}
END_TEST

/* ---- layer norm --------------------------------------------------------- */

static void layernorm_d(double *y, const double *x, const double *g,
			const double *b, int n, double eps)
{
	double m = 0, v = 0;
	for (int i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (int i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v /= n;
	for (int i = 0; i < n; i++)
		y[i] = g[i] * (x[i] - m) / sqrt(v + eps) + b[i];
}

static double layernorm_loss(const double *x, const double *g, const double *b,
			     const float *w, int n, double eps)
{
	double y[300], L = 0;
	layernorm_d(y, x, g, b, n, eps);
	for (int i = 0; i < n; i++)
		L += w[i] * y[i];
	return L;
}

START_TEST(test_layernorm)
{
	int isa[3], ni = kt_isas(isa);
	const float eps = 1e-5f;
	kt_seed(5);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 1; s < NSIZES; s++) {  /* n = 1 is degenerate */
			int n = sizes[s], rows = kt_int(1, 5);
			size_t N = (size_t)rows * n;
			float *x = kt_rand(N, -2, 3), *g = kt_rand(n, 0.5, 1.5);
			float *b = kt_rand(n, -1, 1), *y = kt_zeros(N);
			float *mean = kt_zeros(rows), *rstd = kt_zeros(rows);
			float *w = kt_rand(N, -1, 1), *dx = kt_rand(N, -1, 1);
			float *dg = kt_rand(n, -1, 1), *db = kt_rand(n, -1, 1);
			double *want = kt_dzeros(N), *tol = kt_dzeros(N);
			double xd[300], yd[300], gd[300], bd[300];
			/*
			 * mean and variance: n roundings each, relative to the
			 * spread (x in [-2, 3], so |x - mean| / std <= 4);
			 * then 4 more: (n + 8) u (|g| (|xhat| + 4) + |b|).
			 */
			for (int i = 0; i < n; i++) {
				gd[i] = g[i];
				bd[i] = b[i];
			}
			for (int r = 0; r < rows; r++) {
				for (int i = 0; i < n; i++)
					xd[i] = x[r * n + i];
				layernorm_d(yd, xd, gd, bd, n, eps);
				for (int i = 0; i < n; i++) {
					want[r * n + i] = yd[i];
					tol[r * n + i] = (n + 8) * KT_U *
						(fabs(yd[i] - b[i]) + 4 * g[i] + fabs(b[i]));
				}
			}
			layernorm_forward(y, mean, rstd, x, g, b, rows, n, eps);
			kt_check("layernorm_forward", y, want, tol, 0, N);
			/*
			 * Backward against central differences of L = sum w y.
			 * dx = rstd (dn - mean(dn) - xhat mean(dn xhat)):
			 * terms up to rstd max|dn| (2 + max xhat^2), each with
			 * (n + 8) u; dg, db: rows terms.
			 */
			for (int r = 0; r < rows; r++) {
				double mdn = 0, mx = 0;
				for (int i = 0; i < n; i++) {
					xd[i] = x[r * n + i];
					mdn = fmax(mdn, fabs(w[r * n + i] * g[i]));
					mx = fmax(mx, fabs((x[r * n + i] - mean[r]) * rstd[r]));
				}
				for (int i = 0; i < n; i++) {
					double keep = xd[i];
					xd[i] = keep + H_FD;
					double lp = layernorm_loss(xd, gd, bd, w + r * n, n, eps);
					xd[i] = keep - H_FD;
					double lm = layernorm_loss(xd, gd, bd, w + r * n, n, eps);
					xd[i] = keep;
					size_t k = (size_t)r * n + i;
					want[k] = dx[k] + (lp - lm) / (2 * H_FD);
					tol[k] = KT_U * fabs(want[k]) + 1e-8 +
						 4 * (n + 8) * KT_U * rstd[r] * mdn * (2 + mx * mx);
				}
			}
			double *wg = kt_dzeros(n), *tg = kt_dzeros(n);
			double *wb = kt_dzeros(n), *tb = kt_dzeros(n);
			for (int i = 0; i < n; i++) {
				double sg = 0, sb = 0;
				for (int p = 0; p < 2; p++) {
					double keep = gd[i], h = p ? -H_FD : H_FD;
					gd[i] = keep + h;
					for (int r = 0; r < rows; r++) {
						for (int c = 0; c < n; c++)
							xd[c] = x[r * n + c];
						sg += (p ? -1 : 1) *
						      layernorm_loss(xd, gd, bd, w + r * n, n, eps);
					}
					gd[i] = keep;
					keep = bd[i];
					bd[i] = keep + h;
					for (int r = 0; r < rows; r++) {
						for (int c = 0; c < n; c++)
							xd[c] = x[r * n + c];
						sb += (p ? -1 : 1) *
						      layernorm_loss(xd, gd, bd, w + r * n, n, eps);
					}
					bd[i] = keep;
				}
				double mg = fabs(dg[i]), mb = fabs(db[i]);
				for (int r = 0; r < rows; r++) {
					mg += fabs(w[r * n + i]) * 4;
					mb += fabs(w[r * n + i]);
				}
				wg[i] = dg[i] + sg / (2 * H_FD);
				tg[i] = (rows + n + 8) * KT_U * mg + 1e-8;
				wb[i] = db[i] + sb / (2 * H_FD);
				tb[i] = (rows + 2) * KT_U * mb + 1e-8;
			}
			layernorm_backward(dx, dg, db, w, x, g, mean, rstd, rows, n);
			kt_check("layernorm_backward dx", dx, want, tol, 0, N);
			kt_check("layernorm_backward dg", dg, wg, tg, 0, n);
			kt_check("layernorm_backward db", db, wb, tb, 0, n);
			free(wg); free(tg); free(wb); free(tb);
			free(x); free(g); free(b); free(y); free(mean); free(rstd);
			free(w); free(dx); free(dg); free(db); free(want); free(tol);
		}
	}
}
END_TEST

/*
 * The fused pieces of a softmax cross-entropy, in place and not, against
 * softmax_d: the log-sum-exp (n additions, an exp and a log: absolute
 * (n + 8) u + EXP_REL times |lse| + 1), the sum (n roundings of partial
 * sums: n u sum |z|) and a softmax - c (the softmax's bound times a, plus
 * two roundings).
 */
START_TEST(test_softmax_xent_row)
{
	int isa[3], ni = kt_isas(isa);
	const float a = 0.7f, c = 0.01f;
	kt_seed(12);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 0; s < NSIZES; s++) {
			int n = sizes[s];
			float *z = kt_rand(n, -8, 8), *y = kt_zeros(n);
			double *want = kt_dzeros(n), *tol = kt_dzeros(n);
			double zd[300], yd[300], mx = -INFINITY, se = 0, sz = 0;
			double az = 0, lse;
			float zsum;
			for (int i = 0; i < n; i++) {
				zd[i] = z[i];
				mx = fmax(mx, zd[i]);
				sz += zd[i];
				az += fabs(zd[i]);
			}
			for (int i = 0; i < n; i++)
				se += exp(zd[i] - mx);
			lse = mx + log(se);
			softmax_d(yd, zd, n, 0);
			for (int i = 0; i < n; i++) {
				want[i] = a * yd[i] - c;
				tol[i] = a * ((n + 8) * KT_U + EXP_REL) * yd[i] +
					 2 * KT_U * (a * yd[i] + c);
			}
			for (int inplace = 0; inplace < 2; inplace++) {
				float *out = inplace ? z : y, got;
				got = softmax_xent_row(out, z, n, a, c, &zsum);
				ck_assert_msg(fabs(got - lse) <= ((n + 8) * KT_U +
					      EXP_REL) * (fabs(lse) + 1),
					      "lse %g, want %g (n %d)", got, lse, n);
				ck_assert_msg(fabs(zsum - sz) <= n * KT_U * az,
					      "zsum %g, want %g (n %d)", zsum, sz,
					      n);
				kt_check("softmax_xent_row", out, want, tol, 0, n);
			}
			free(z); free(y); free(want); free(tol);
		}
	}
}
END_TEST

/* ---- Adam --------------------------------------------------------------- */

/* One update against the formula in double, then the same bits from every
 * instruction set and thread count. */
START_TEST(test_adam)
{
	const struct adam_args a = {
		.lr = 0.01f, .b1 = 0.9f, .b2 = 0.98f, .eps = 1e-9f,
		.c1 = 1.0f / (1 - 0.9f * 0.9f), .c2 = 1.0f / (1 - 0.98f * 0.98f),
		.gscale = 0.5f,
	};
	int isa[3], ni = kt_isas(isa);
	kt_seed(11);
	for (int s = 0; s < NSIZES; s++) {
		size_t n = (size_t)sizes[s] * 97;	/* past one thread's grain */
		float *w0 = kt_rand(n, -1, 1), *g = kt_rand(n, -2, 2);
		float *m0 = kt_rand(n, -0.5, 0.5), *v0 = kt_rand(n, 0, 0.3);
		float *ref = NULL;
		double *want = kt_dzeros(3 * n), *tol = kt_dzeros(3 * n);
		for (size_t i = 0; i < n; i++) {
			double gi = (double)g[i] * a.gscale;
			double mi = a.b1 * (double)m0[i] + (1 - (double)a.b1) * gi;
			double vi = a.b2 * (double)v0[i] +
				    (1 - (double)a.b2) * gi * gi;
			double step = a.lr * (mi * a.c1) /
				      (sqrt(vi * a.c2) + a.eps);
			want[i] = w0[i] - step;
			want[n + i] = mi;
			want[2 * n + i] = vi;
			/* a few roundings of each term */
			tol[n + i] = 4 * KT_U * (fabs(a.b1 * m0[i]) + fabs(gi));
			tol[2 * n + i] = 4 * KT_U * (a.b2 * v0[i] + gi * gi);
			tol[i] = KT_U * fabs(want[i]) + 2 * KT_U * fabs(step) +
				 fabs(step) * (tol[n + i] / fabs(mi) +
					       tol[2 * n + i] / vi);
		}
		for (int ii = 0; ii < ni; ii++) {
			kern_set_isa(isa[ii]);
			for (int t = 1; t <= 2; t++) {
				float *x = kt_zeros(3 * n);
				memcpy(x, w0, n * sizeof(float));
				memcpy(x + n, m0, n * sizeof(float));
				memcpy(x + 2 * n, v0, n * sizeof(float));
				kern_set_threads(t);
				adam_update(x, x + n, x + 2 * n, g, n, &a);
				kt_check("adam_update", x, want, tol, 0, 3 * n);
				if (!ref) {
					ref = x;
					continue;
				}
				ck_assert_msg(!memcmp(x, ref,
						      3 * n * sizeof(float)),
					      "adam_update: other bits from "
					      "isa %d, %d threads", isa[ii], t);
				free(x);
			}
		}
		free(ref);
		free(w0); free(g); free(m0); free(v0); free(want); free(tol);
	}
	kern_set_threads(2);
}
END_TEST

/* ---- maxout, embedding -------------------------------------------------- */

START_TEST(test_maxout)
{
	kt_seed(6);
	int rows = 3, l = 7;
	size_t N = (size_t)rows * l;
	float *x = kt_rand(2 * N, -1, 1), *y = kt_zeros(N);
	float *dx = kt_rand(2 * N, -1, 1), *dy = kt_rand(N, -1, 1);
	double *want = kt_dzeros(2 * N), *tol = kt_dzeros(2 * N);
	x[4] = x[5];                    /* a tie: the first wins */
	for (size_t i = 0; i < N; i++)
		want[i] = fmax(x[2 * i], x[2 * i + 1]);
	maxout_forward(y, x, rows, l);
	kt_check("maxout_forward", y, want, NULL, 0, N);
	/*
	 * Backward against differences of L = sum dy y: central ones away
	 * from the tie; at the tie (x[4] == x[5]) the one-sided ones that
	 * "ties: the first" implies: raising x[4] moves the output, lowering
	 * x[5] does not.
	 */
	for (size_t k = 0; k < 2 * N; k++) {
		float keep = x[k], yp[64], ym[64];
		float hp = k == 5 ? 0 : 1e-3f, hm = k == 4 ? 0 : 1e-3f;
		x[k] = keep + hp;
		maxout_forward(yp, x, rows, l);
		x[k] = keep - hm;
		maxout_forward(ym, x, rows, l);
		x[k] = keep;
		double d = 0;
		for (size_t i = 0; i < N; i++)
			d += dy[i] * ((double)yp[i] - ym[i]);
		want[k] = dx[k] + d / ((double)(keep + hp) - (double)(keep - hm));
		tol[k] = 1e-6 * fabs(want[k]) + 1e-6;
	}
	maxout_backward(dx, dy, x, rows, l);
	kt_check("maxout_backward", dx, want, tol, 0, 2 * N);
	free(x); free(y); free(dx); free(dy); free(want); free(tol);
}
END_TEST

START_TEST(test_embedding)
{
	int V = 11, dim = 13, n = 9;
	int32_t ids[9] = { 3, 0, 10, 3, 7, 3, 1, 0, 10 };
	float *table = kt_rand((size_t)V * dim, -1, 1);
	float *out = kt_zeros((size_t)n * dim);
	float *dout = kt_rand((size_t)n * dim, -1, 1);
	float *dtab = kt_rand((size_t)V * dim, -1, 1);
	double *want = kt_dzeros((size_t)V * dim), *tol = kt_dzeros((size_t)V * dim);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < dim; k++)
			want[i * dim + k] = table[ids[i] * dim + k];
	embedding_forward(out, ids, n, table, dim);
	kt_check("embedding_forward", out, want, NULL, 0, (size_t)n * dim);
	/* The gradient of a gather is the scatter-add: up to 4 terms. */
	for (int v = 0; v < V * dim; v++) {
		want[v] = dtab[v];
		tol[v] = fabs(dtab[v]);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < dim; k++) {
			want[ids[i] * dim + k] += dout[i * dim + k];
			tol[ids[i] * dim + k] += fabs(dout[i * dim + k]);
		}
	for (int v = 0; v < V * dim; v++)
		tol[v] *= 4 * KT_U;
	embedding_backward(dtab, ids, n, dout, dim);
	kt_check("embedding_backward", dtab, want, tol, 0, (size_t)V * dim);
	free(table); free(out); free(dout); free(dtab); free(want); free(tol);
}
END_TEST

/*
 * The column sums of the bias and layer-norm gradients and the embedding's
 * scatter-add take their rows one at a time, in order, on any thread
 * count: the same bits as that loop in float, on sizes around the vectors'
 * four rows and four columns.
 */
START_TEST(test_sums_in_row_order)
{
	int rows_[] = { 1, 3, 4, 5, 8, 11 }, n_[] = { 1, 3, 4, 7, 13, 37 };

	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int a = 0; a < 6; a++)
			for (int c = 0; c < 6; c++) {
				int rows = rows_[a], n = n_[c];
				size_t N = (size_t)rows * n;
				float *dy = kt_rand(N, -1, 1), *x = kt_rand(N, -2, 3);
				float *m = kt_rand(rows, -1, 1), *s = kt_rand(rows, 0.5, 2);
				float *g = kt_rand(n, 0.5, 1.5), *dx = kt_zeros(N);
				float *db = kt_rand(n, -1, 1), *dg = kt_rand(n, -1, 1);
				float *wb = malloc(n * sizeof *wb), *wg = malloc(n * sizeof *wg);
				int32_t *ids = malloc(rows * sizeof *ids);

				for (int i = 0; i < n; i++) {
					wb[i] = db[i];
					wg[i] = dg[i];
					for (int r = 0; r < rows; r++) {
						float y = dy[r * n + i];
						wb[i] += y;
						wg[i] += y * (x[r * n + i] - m[r]) * s[r];
					}
				}
				bias_backward(db, dy, rows, n);
				ck_assert(!memcmp(db, wb, n * sizeof *db));
				layernorm_backward(dx, dg, db, dy, x, g, m, s, rows, n);
				ck_assert(!memcmp(dg, wg, n * sizeof *dg));
				/* the embedding: rows 0, 1, 0, 1, ... of a table [2, n] */
				float *tab = kt_zeros(2 * (size_t)n);
				float *want = kt_zeros(2 * (size_t)n);

				for (int r = 0; r < rows; r++) {
					ids[r] = r % 2;
					for (int i = 0; i < n; i++)
						want[(r % 2) * n + i] += dy[r * n + i];
				}
				embedding_backward(tab, ids, rows, dy, n);
				ck_assert(!memcmp(tab, want, 2 * n * sizeof *tab));
				free(tab);
				free(want);
				free(dy); free(x); free(m); free(s); free(g); free(dx);
				free(db); free(dg); free(wb); free(wg); free(ids);
			}
	}
	kern_set_threads(1);
}
END_TEST

/* ---- GRU ---------------------------------------------------------------- */

/*
 * One step of the GRU of doc/MODELS.md in double: px [3n] = W x + b (rows z, r,
 * h), U [3n, n]; returns hnew [n].
 */
static void gru_step_d(double *hnew, const double *px, const double *h,
		       const float *U, int n)
{
	double z[300], r[300];
	for (int i = 0; i < n; i++) {
		double sz = px[i], sr = px[n + i];
		for (int k = 0; k < n; k++) {
			sz += U[i * n + k] * h[k];
			sr += U[(n + i) * n + k] * h[k];
		}
		z[i] = 1 / (1 + exp(-sz));
		r[i] = 1 / (1 + exp(-sr));
	}
	for (int i = 0; i < n; i++) {
		double sh = px[2 * n + i];
		for (int k = 0; k < n; k++)
			sh += U[(2 * n + i) * n + k] * r[k] * h[k];
		hnew[i] = (1 - z[i]) * h[i] + z[i] * tanh(sh);
	}
}

static double gru_loss(const double *px, const double *h, const float *U,
		       const float *w, int n)
{
	double hn[300], L = 0;
	gru_step_d(hn, px, h, U, n);
	for (int i = 0; i < n; i++)
		L += w[i] * hn[i];
	return L;
}

/* y [B, m] = x [B, k] U[rows r0..r0+m)^T (+= when add), in float. */
static void matmul_t(float *y, int ldy, const float *x, int ldx, const float *U,
		     int r0, int m, int k, int B, int add)
{
	for (int b = 0; b < B; b++)
		for (int i = 0; i < m; i++) {
			float s = add ? y[b * ldy + i] : 0;
			for (int c = 0; c < k; c++)
				s += x[b * ldx + c] * U[(r0 + i) * k + c];
			y[b * ldy + i] = s;
		}
}

START_TEST(test_gru)
{
	int isa[3], ni = kt_isas(isa);
	kt_seed(7);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 0; s < NSIZES - 1; s++) {
			int n = sizes[s], B = kt_int(1, 4);
			float *px = kt_rand((size_t)B * 3 * n, -2, 2);
			float *U = kt_rand((size_t)3 * n * n, -1.0 / n, 1.0 / n);
			float *h = kt_rand((size_t)B * n, -1, 1);
			float *pre = kt_zeros((size_t)B * 3 * n);
			float *zr = kt_zeros((size_t)B * 2 * n), *rh = kt_zeros((size_t)B * n);
			float *hh = kt_zeros((size_t)B * n), *hn = kt_zeros((size_t)B * n);
			float *w = kt_rand((size_t)B * n, -1, 1);
			double *want = kt_dzeros((size_t)B * 3 * n), *tol = kt_dzeros((size_t)B * 3 * n);
			double pd[900], hd[300], hnd[300];

			/* Forward, composed as a model does it. */
			memcpy(pre, px, sizeof(float) * B * 3 * n);
			matmul_t(pre, 3 * n, h, n, U, 0, 2 * n, n, B, 1);
			gru_gates_forward(zr, rh, pre, h, B, n);
			matmul_t(pre + 2 * n, 3 * n, rh, n, U, 2 * n, n, n, B, 1);
			gru_state_forward(hn, hh, pre, zr, h, B, n);
			/*
			 * hnew: the products (n + 2) u relative to sum |U h|
			 * <= 1 + |px|, through sigmoid and tanh (slope <= 1),
			 * plus their own bounds: 16 (n + 8) u absolute.
			 */
			for (int b = 0; b < B; b++) {
				for (int i = 0; i < 3 * n; i++)
					pd[i] = px[b * 3 * n + i];
				for (int i = 0; i < n; i++)
					hd[i] = h[b * n + i];
				gru_step_d(hnd, pd, hd, U, n);
				for (int i = 0; i < n; i++) {
					want[b * n + i] = hnd[i];
					tol[b * n + i] = 16 * (n + 8) * KT_U;
				}
			}
			kt_check("gru forward", hn, want, tol, 0, (size_t)B * n);

			/* Backward, as the comment in kernels.h composes it,
			 * against central differences of L = sum w hnew in
			 * px and h. */
			float *dpre = kt_zeros((size_t)B * 3 * n), *dh = kt_zeros((size_t)B * n);
			float *drh = kt_zeros((size_t)B * n);
			gru_state_backward(dpre, dh, w, hh, zr, h, B, n);
			for (int b = 0; b < B; b++)     /* drh = dpre_h U_h */
				for (int c = 0; c < n; c++) {
					float sum = 0;
					for (int i = 0; i < n; i++)
						sum += dpre[b * 3 * n + 2 * n + i] *
						       U[(2 * n + i) * n + c];
					drh[b * n + c] = sum;
				}
			gru_gates_backward(dpre, dh, drh, zr, h, B, n);
			for (int b = 0; b < B; b++)     /* dh += dpre_zr U_zr */
				for (int c = 0; c < n; c++) {
					float sum = dh[b * n + c];
					for (int i = 0; i < 2 * n; i++)
						sum += dpre[b * 3 * n + i] * U[i * n + c];
					dh[b * n + c] = sum;
				}
			double *wh = kt_dzeros((size_t)B * n), *th = kt_dzeros((size_t)B * n);
			for (int b = 0; b < B; b++) {
				for (int i = 0; i < 3 * n; i++)
					pd[i] = px[b * 3 * n + i];
				for (int i = 0; i < n; i++)
					hd[i] = h[b * n + i];
				double sw = 0;
				for (int i = 0; i < n; i++)
					sw += fabs(w[b * n + i]);
				for (int i = 0; i < 3 * n; i++) {
					double keep = pd[i];
					pd[i] = keep + H_FD;
					double lp = gru_loss(pd, hd, U, w + b * n, n);
					pd[i] = keep - H_FD;
					double lm = gru_loss(pd, hd, U, w + b * n, n);
					pd[i] = keep;
					want[b * 3 * n + i] = (lp - lm) / (2 * H_FD);
					tol[b * 3 * n + i] = 16 * (n + 8) * KT_U * (1 + sw / n) + 1e-8;
				}
				for (int i = 0; i < n; i++) {
					double keep = hd[i];
					hd[i] = keep + H_FD;
					double lp = gru_loss(pd, hd, U, w + b * n, n);
					hd[i] = keep - H_FD;
					double lm = gru_loss(pd, hd, U, w + b * n, n);
					hd[i] = keep;
					wh[b * n + i] = (lp - lm) / (2 * H_FD);
					th[b * n + i] = 16 * (n + 8) * KT_U * (1 + sw / n) + 1e-8;
				}
			}
			kt_check("gru backward dpre", dpre, want, tol, 0, (size_t)B * 3 * n);
			kt_check("gru backward dh", dh, wh, th, 0, (size_t)B * n);
			free(wh); free(th); free(dpre); free(dh); free(drh);
			free(px); free(U); free(h); free(pre); free(zr); free(rh);
			free(hh); free(hn); free(w); free(want); free(tol);
		}
	}
}
END_TEST

/* ---- LSTM cell ------------------------------------------------------------ */

/* The cell of doc/MODELS.md in double, one row: from pre [4n] (rows i, f,
 * g, o) and c [n], cnew and hnew [n]. */
static void lstm_cell_d(double *cnew, double *hnew, const double *pre,
			const double *c, int n)
{
	for (int k = 0; k < n; k++) {
		double i = 1 / (1 + exp(-pre[k])), f = 1 / (1 + exp(-pre[n + k]));
		double g = tanh(pre[2 * n + k]), o = 1 / (1 + exp(-pre[3 * n + k]));
		cnew[k] = f * c[k] + i * g;
		hnew[k] = o * tanh(cnew[k]);
	}
}

/* L = sum wh hnew + sum wc cnew of one row */
static double lstm_loss(const double *pre, const double *c, const float *wh,
			const float *wc, int n)
{
	double cn[300], hn[300], L = 0;
	lstm_cell_d(cn, hn, pre, c, n);
	for (int k = 0; k < n; k++)
		L += wh[k] * hn[k] + (wc ? wc[k] * cn[k] : 0);
	return L;
}

/*
 * The cell on every instruction set against the double equations, and its
 * backward against central differences (h 1e-4 in double: truncation
 * about 1e-9) of L = sum wh hnew + sum wc cnew in pre and c, with and
 * without the cell's own gradient dcnew = wc.  Each output is a few
 * operations on one element, each within a few units of roundoff
 * (vmath's sigmoid and tanh: doc/kernels.md): 64 u of the values' size.
 * dc is added into: it starts at 1.
 */
START_TEST(test_lstm_cell)
{
	int isa[3], ni = kt_isas(isa);
	kt_seed(8);
	for (int ii = 0; ii < ni; ii++) {
		kern_set_isa(isa[ii]);
		for (int s = 0; s < NSIZES - 1; s++) {
			int n = sizes[s], B = kt_int(1, 4);
			float *pre = kt_rand((size_t)B * 4 * n, -3, 3);
			float *c = kt_rand((size_t)B * n, -2, 2);
			float *act = kt_zeros((size_t)B * 4 * n);
			float *cn = kt_zeros((size_t)B * n), *hn = kt_zeros((size_t)B * n);
			float *wh = kt_rand((size_t)B * n, -1, 1);
			float *wc = kt_rand((size_t)B * n, -1, 1);
			float *dpre = kt_zeros((size_t)B * 4 * n), *dc = kt_zeros((size_t)B * n);
			double *want = kt_dzeros((size_t)B * 4 * n), *tol = kt_dzeros((size_t)B * 4 * n);
			double *wantc = kt_dzeros((size_t)B * n), *wanth = kt_dzeros((size_t)B * n);
			double *tolc = kt_dzeros((size_t)B * n);
			double pd[1200], cd[300], cnd[300], hnd[300];

			lstm_cell_forward(act, cn, hn, pre, c, B, n);
			for (int b = 0; b < B; b++) {
				for (int i = 0; i < 4 * n; i++)
					pd[i] = pre[b * 4 * n + i];
				for (int i = 0; i < n; i++)
					cd[i] = c[b * n + i];
				lstm_cell_d(cnd, hnd, pd, cd, n);
				for (int i = 0; i < n; i++) {
					wantc[b * n + i] = cnd[i];
					wanth[b * n + i] = hnd[i];
					tolc[b * n + i] = 64 * KT_U * (1 + fabs(cd[i]));
				}
				for (int i = 0; i < 4 * n; i++) {
					double x = pd[i];
					int gate = i / n;
					want[b * 4 * n + i] = gate == 2 ? tanh(x) :
						1 / (1 + exp(-x));
					tol[b * 4 * n + i] = 16 * KT_U;
				}
			}
			kt_check("lstm act", act, want, tol, 0, (size_t)B * 4 * n);
			kt_check("lstm cnew", cn, wantc, tolc, 0, (size_t)B * n);
			kt_check("lstm hnew", hn, wanth, tolc, 0, (size_t)B * n);

			for (int with_dc = 0; with_dc < 2; with_dc++) {
				const float *dcn = with_dc ? wc : NULL;
				for (size_t i = 0; i < (size_t)B * n; i++)
					dc[i] = 1;
				lstm_cell_backward(dpre, dc, wh, dcn, act, c, cn, B, n);
				for (int b = 0; b < B; b++) {
					const float *whb = wh + b * n;
					const float *wcb = dcn ? wc + b * n : NULL;
					for (int i = 0; i < 4 * n; i++)
						pd[i] = pre[b * 4 * n + i];
					for (int i = 0; i < n; i++)
						cd[i] = c[b * n + i];
					for (int i = 0; i < 4 * n; i++) {
						double keep = pd[i];
						pd[i] = keep + H_FD;
						double lp = lstm_loss(pd, cd, whb, wcb, n);
						pd[i] = keep - H_FD;
						double lm = lstm_loss(pd, cd, whb, wcb, n);
						pd[i] = keep;
						want[b * 4 * n + i] = (lp - lm) / (2 * H_FD);
						tol[b * 4 * n + i] = 64 * KT_U * 3 + 1e-8;
					}
					for (int i = 0; i < n; i++) {
						double keep = cd[i];
						cd[i] = keep + H_FD;
						double lp = lstm_loss(pd, cd, whb, wcb, n);
						cd[i] = keep - H_FD;
						double lm = lstm_loss(pd, cd, whb, wcb, n);
						cd[i] = keep;
						wantc[b * n + i] = 1 + (lp - lm) / (2 * H_FD);
						tolc[b * n + i] = 64 * KT_U * 3 + 1e-8;
					}
				}
				kt_check("lstm backward dpre", dpre, want, tol, 0, (size_t)B * 4 * n);
				kt_check("lstm backward dc", dc, wantc, tolc, 0, (size_t)B * n);
			}
			free(pre); free(c); free(act); free(cn); free(hn); free(wh);
			free(wc); free(dpre); free(dc); free(want); free(tol);
			free(wantc); free(wanth); free(tolc);
		}
	}
}
END_TEST

/*
 * Every instruction set's cell against the reference's on the same
 * inputs, forward and backward, to the same few units of roundoff: the
 * vector version computes what the scalar one does.
 */
START_TEST(test_lstm_cell_vs_reference)
{
	int isa[3], ni = kt_isas(isa), n = 37, B = 5;
	size_t N = (size_t)B * n;
	kt_seed(9);
	float *pre = kt_rand(4 * N, -4, 4), *c = kt_rand(N, -2, 2);
	float *dh = kt_rand(N, -1, 1), *dcn = kt_rand(N, -1, 1);
	float *act[3], *cn[3], *hn[3], *dpre[3], *dc[3];
	for (int ii = 0; ii < ni; ii++) {
		act[ii] = kt_zeros(4 * N);
		dpre[ii] = kt_zeros(4 * N);
		cn[ii] = kt_zeros(N);
		hn[ii] = kt_zeros(N);
		dc[ii] = kt_zeros(N);
		kern_set_isa(isa[ii]);
		lstm_cell_forward(act[ii], cn[ii], hn[ii], pre, c, B, n);
		lstm_cell_backward(dpre[ii], dc[ii], dh, dcn, act[ii], c,
				   cn[ii], B, n);
	}
	ck_assert_int_eq(isa[0], ISA_REFERENCE);
	for (int ii = 1; ii < ni; ii++) {
		double *w = kt_dzeros(4 * N);
		for (size_t i = 0; i < 4 * N; i++)
			w[i] = act[0][i];
		kt_check("act vs reference", act[ii], w, NULL, 32 * KT_U, 4 * N);
		for (size_t i = 0; i < 4 * N; i++)
			w[i] = dpre[0][i];
		kt_check("dpre vs reference", dpre[ii], w, NULL, 128 * KT_U, 4 * N);
		for (size_t i = 0; i < N; i++)
			w[i] = cn[0][i];
		kt_check("cnew vs reference", cn[ii], w, NULL, 128 * KT_U, N);
		for (size_t i = 0; i < N; i++)
			w[i] = hn[0][i];
		kt_check("hnew vs reference", hn[ii], w, NULL, 128 * KT_U, N);
		for (size_t i = 0; i < N; i++)
			w[i] = dc[0][i];
		kt_check("dc vs reference", dc[ii], w, NULL, 128 * KT_U, N);
		free(w);
	}
	for (int ii = 0; ii < ni; ii++) {
		free(act[ii]); free(dpre[ii]); free(cn[ii]); free(hn[ii]);
		free(dc[ii]);
	}
	free(pre); free(c); free(dh); free(dcn);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kern");
	TCase *tc = tcase_create("kern");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_parallel_for);
	tcase_add_test(tc, test_parallel_each);
	tcase_add_test(tc, test_two_callers);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_idle_sleeps);
	tcase_add_test(tc, test_vmath);
	tcase_add_test(tc, test_bias_relu);
	tcase_add_test(tc, test_softmax);
	tcase_add_test(tc, test_softmax_nan);
	tcase_add_test(tc, test_layernorm);
	tcase_add_test(tc, test_softmax_xent_row);
	tcase_add_test(tc, test_adam);
	tcase_add_test(tc, test_maxout);
	tcase_add_test(tc, test_embedding);
	tcase_add_test(tc, test_sums_in_row_order);
	tcase_add_test(tc, test_gru);
	tcase_add_test(tc, test_lstm_cell);
	tcase_add_test(tc, test_lstm_cell_vs_reference);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
