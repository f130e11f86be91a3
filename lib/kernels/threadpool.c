/*
 * threadpool.c: the one thread pool of the process, and per-thread scratch
 * memory for the kernels.
 *
 * The pool is created on first use.  A parallel_for publishes a job (a new
 * generation number) and wakes the workers; each takes chunks of the range
 * from an atomic counter, the caller too, and the caller then waits until
 * every worker has left the job.  One job runs at a time: a call made while
 * the pool is busy (a nested call from a worker, or a second thread of the
 * program) runs its range serially in the calling thread.
 *
 * Waiting is a short spin, then sleep.  A worker that leaves a job watches
 * the generation for SPIN_NS before it sleeps on a condition variable, and
 * the caller watches the count of workers still in the job as long before
 * it sleeps: a decoder's step is a few jobs a few tens of microseconds
 * apart, and a futex wake-up costs about 40 us in a virtual machine (an
 * interrupt between processors), as long as the gaps themselves.  An idle
 * pool costs at most SPIN_NS of a core per job, then sleeps.  The spin
 * yields the core every 64 looks: where the cores are shared (the stages
 * of a pipeline, each with a pool as wide as the machine) a spinning
 * worker otherwise holds a core another process' thread is waiting for.
 * The Firefox-shaped student's 2,000 lines through the five stages, two
 * threads each on 2 cores: 0.82 s of wall clock without the yield, 0.68 s
 * with it; one process alone the same with or without.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/errmsg.h"
#include "base/scratch.h"
#include "kern_impl.h"

#define MAX_THREADS 256
#define SPIN_NS 50000

struct job {
	void (*fn)(void *ctx, int64_t lo, int64_t hi);
	void *ctx;
	int64_t n, chunk;
	int nworkers;                   /* workers that take part */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;            /* workers: a new job */
	pthread_cond_t done;            /* caller: the last worker left */
	int nthreads;                   /* threads to use, the caller included */
	int nspawned;                   /* workers running */
	int sleepers;                   /* workers asleep on wake */
	int caller_asleep;              /* the caller asleep on done */
	_Atomic unsigned long generation;
	struct job job;
	_Atomic int64_t next;           /* next unclaimed index of the job */
	_Atomic int active;             /* workers still in the job */
	atomic_flag busy;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.busy = ATOMIC_FLAG_INIT,
};

static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

static int clamp_threads(long n)
{
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* A child of fork has none of the workers: it starts the pool afresh. */
static void pool_after_fork(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.wake, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.nspawned = 0;
	pool.sleepers = 0;
	pool.caller_asleep = 0;
	atomic_store(&pool.active, 0);
	atomic_flag_clear(&pool.busy);
}

static void threads_default(void)
{
	const char *env = getenv("ATTN_THREADS");
	long n = 0;

	if (env && *env) {
		char *end;
		n = strtol(env, &end, 10);
		if (*end)
			n = 0;
	}
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_atfork(NULL, NULL, pool_after_fork);
	pthread_mutex_lock(&pool.lock);
	if (pool.nthreads == 0)
		pool.nthreads = clamp_threads(n);
	pthread_mutex_unlock(&pool.lock);
}

void kern_set_threads(int n)
{
	if (n < 1)
		return;
	pthread_once(&threads_once, threads_default);
	pthread_mutex_lock(&pool.lock);
	pool.nthreads = clamp_threads(n);
	pthread_mutex_unlock(&pool.lock);
}

int kern_threads(void)
{
	pthread_once(&threads_once, threads_default);
	pthread_mutex_lock(&pool.lock);
	int n = pool.nthreads;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Spins up to SPIN_NS while *v equals val; returns 1 when it changed. */
static int spin_while_ulong(_Atomic unsigned long *v, unsigned long val)
{
	int64_t end = now_ns() + SPIN_NS;

	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (atomic_load_explicit(v, memory_order_acquire) != val)
				return 1;
			cpu_relax();
		}
		sched_yield();
		if (now_ns() > end)
			return 0;
	}
}

static int spin_while_positive(_Atomic int *v)
{
	int64_t end = now_ns() + SPIN_NS;

	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (atomic_load_explicit(v, memory_order_acquire) <= 0)
				return 1;
			cpu_relax();
		}
		sched_yield();
		if (now_ns() > end)
			return 0;
	}
}

static void run_chunks(const struct job *j)
{
	for (;;) {
		int64_t lo = atomic_fetch_add(&pool.next, j->chunk);
		if (lo >= j->n)
			break;
		int64_t hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
		j->fn(j->ctx, lo, hi);
	}
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;    /* 1 .. : the caller is 0 */
	unsigned long seen = 0;

	for (;;) {
		spin_while_ulong(&pool.generation, seen);
		pthread_mutex_lock(&pool.lock);
		while (atomic_load(&pool.generation) == seen) {
			pool.sleepers++;
			pthread_cond_wait(&pool.wake, &pool.lock);
			pool.sleepers--;
		}
		seen = atomic_load(&pool.generation);
		struct job j = pool.job;
		pthread_mutex_unlock(&pool.lock);
		if (id > j.nworkers)
			continue;
		run_chunks(&j);
		if (atomic_fetch_sub(&pool.active, 1) == 1) {
			pthread_mutex_lock(&pool.lock);
			if (pool.caller_asleep)
				pthread_cond_signal(&pool.done);
			pthread_mutex_unlock(&pool.lock);
		}
	}
	return NULL;
}

/* Starts workers up to want; returns how many run.  Holds pool.lock. */
static int spawn_workers(int want)
{
	while (pool.nspawned < want) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int e = pthread_create(&t, &attr, worker,
				       (void *)(intptr_t)(pool.nspawned + 1));
		pthread_attr_destroy(&attr);
		if (e)
			break;
		pool.nspawned++;
	}
	return pool.nspawned;
}

/* Runs fn over [0, n) on the pool in chunks of at least grain: of one
 * index each if one_each, else of about a quarter of a thread's share,
 * which balances uneven work without many trips to the counter. */
static void parallel(int64_t n, int64_t grain, int one_each,
		     void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	int nt = kern_threads();
	if (nt == 1 || n <= grain || atomic_flag_test_and_set(&pool.busy)) {
		fn(ctx, 0, n);
		return;
	}
	int64_t chunk = one_each ? 1 :
			(n + 4 * (int64_t)nt - 1) / (4 * (int64_t)nt);
	if (chunk < grain)
		chunk = grain;
	int64_t nchunks = (n + chunk - 1) / chunk;

	pthread_mutex_lock(&pool.lock);
	int nw = spawn_workers(nt - 1);
	if (nw > nchunks - 1)
		nw = (int)(nchunks - 1);
	pool.job = (struct job){ fn, ctx, n, chunk, nw };
	atomic_store(&pool.next, 0);
	atomic_store(&pool.active, nw);
	atomic_fetch_add(&pool.generation, 1);
	if (pool.sleepers > 0)
		pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);

	struct job j = { fn, ctx, n, chunk, nw };
	run_chunks(&j);

	if (!spin_while_positive(&pool.active)) {
		pthread_mutex_lock(&pool.lock);
		pool.caller_asleep = 1;
		while (atomic_load(&pool.active) > 0)
			pthread_cond_wait(&pool.done, &pool.lock);
		pool.caller_asleep = 0;
		pthread_mutex_unlock(&pool.lock);
	}
	atomic_flag_clear(&pool.busy);
}

void kern_parallel_for(int64_t n, int64_t grain,
		       void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx)
{
	parallel(n, grain, 0, fn, ctx);
}

void kern_parallel_each(int64_t n,
			void (*fn)(void *ctx, int64_t lo, int64_t hi),
			void *ctx)
{
	parallel(n, 1, 1, fn, ctx);
}

/*
 * Scratch: a thread-local array of buffers that grow as needed.  A key with
 * a destructor frees them when a thread of the program exits.
 */
/* The kernels' slots, then the caller's (kern_caller_scratch). */
struct slots {
	struct scratch slot[KERN_SCRATCH_SLOTS + 1];
};

static _Thread_local struct slots *tls_scratch;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void slots_free(void *arg)
{
	struct slots *s = arg;

	for (int i = 0; i <= KERN_SCRATCH_SLOTS; i++)
		scratch_free(&s->slot[i]);
	free(s);
}

static void scratch_key_create(void)
{
	pthread_key_create(&scratch_key, slots_free);
}

static struct scratch *thread_scratch(int slot)
{
	struct slots *s = tls_scratch;

	if (!s) {
		pthread_once(&scratch_once, scratch_key_create);
		s = calloc(1, sizeof(*s));
		if (!s) {
			err_set("out of memory");
			return NULL;
		}
		tls_scratch = s;
		pthread_setspecific(scratch_key, s);
	}
	return &s->slot[slot];
}

void *kern_scratch(int slot, size_t bytes)
{
	struct scratch *s = thread_scratch(slot);

	return s ? scratch_get(s, bytes) : NULL;
}

struct scratch *kern_caller_scratch(void)
{
	return thread_scratch(KERN_SCRATCH_SLOTS);
}
