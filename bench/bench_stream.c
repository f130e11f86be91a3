/*
 * bench_stream: throughput of the tensor stream through a pipe, writing and
 * reading, plain and compressed, against cat(1) moving the same bytes
 * through a pipe in the same run; compressed records passed on as a
 * stage passes them, checked or left unchecked (TSR_RAW_LAZY); and the
 * time to map a model file, against reading it with cat.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"
#include "base/errmsg.h"
#include "stream/stream.h"

#define MIB (1024.0 * 1024.0)
#define RECORDS 256             /* of 512 KiB: 128 MiB per run */
#define ZRECORDS 32             /* compressed: slower, 16 MiB */

static void die(const char *what)
{
	fprintf(stderr, "bench_stream: %s: %s\n", what, err_msg());
	exit(1);
}

/* Starts `cat` reading the returned fd (a pipe) and writing to out. */
static pid_t spawn_cat(int *wfd, int out)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		dup2(out, 1);
		close(p[0]);
		close(p[1]);
		execlp("cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* Starts a child writing n bytes at buf into the returned fd (a pipe),
 * in large writes. */
static pid_t spawn_writer(int *rfd, const unsigned char *buf, size_t n)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		exit(1);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (size_t off = 0; off < n;) {
			ssize_t k = write(p[1], buf + off,
					  n - off < (1 << 20) ? n - off : 1 << 20);
			if (k <= 0)
				_exit(1);
			off += k;
		}
		_exit(0);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static void wait_for(pid_t pid)
{
	int st;

	waitpid(pid, &st, 0);
}

/* A stream of count records in one frame, like a model file's, then
 * its end mark, in memory. */
static unsigned char *make_stream(const struct tensor *t, int count,
				  int level, size_t *n)
{
	FILE *f = tmpfile();
	struct tsr_writer *w = tsr_writer_fd(fileno(f), "tmp", level);
	unsigned char *buf;

	struct tensor named = *t;       /* the same payload, one name each */

	for (int i = 0; i < count; i++) {
		snprintf(named.name, sizeof named.name, "w.%d", i);
		if (tsr_write(w, &named, 0, i == count - 1) < 0)
			die("write");
	}
	if (tsr_writer_finish(w) < 0)
		die("close");
	*n = lseek(fileno(f), 0, SEEK_END);
	buf = malloc(*n);
	if (pread(fileno(f), buf, *n, 0) != (ssize_t)*n)
		exit(1);
	fclose(f);
	return buf;
}

/* Seconds for cat to move the n bytes through a pipe. */
static double time_cat(const unsigned char *buf, size_t n, int devnull)
{
	int wfd;
	double t0 = bench_now();
	pid_t cat = spawn_cat(&wfd, devnull);

	for (size_t off = 0; off < n;) {
		ssize_t k = write(wfd, buf + off, n - off < (1 << 20) ? n - off : 1 << 20);
		if (k <= 0)
			exit(1);
		off += k;
	}
	close(wfd);
	wait_for(cat);
	return bench_now() - t0;
}

static double time_write(const struct tensor *t, int count, int level,
			 int devnull)
{
	int wfd;
	double t0 = bench_now();
	pid_t cat = spawn_cat(&wfd, devnull);
	struct tsr_writer *w = tsr_writer_fd(wfd, "pipe", level);

	for (int i = 0; i < count; i++)
		if (tsr_write(w, t, i, 1) < 0)
			die("write");
	if (tsr_writer_finish(w) < 0)
		die("close");
	close(wfd);
	wait_for(cat);
	return bench_now() - t0;
}

static double time_read(const unsigned char *buf, size_t n, int count)
{
	int rfd, got = 0;
	double t0 = bench_now();
	pid_t child = spawn_writer(&rfd, buf, n);
	struct tsr_reader *r = tsr_reader_fd(rfd, "pipe");
	struct tensor t;

	while (tsr_read(r, &t, NULL) == 1) {
		tensor_free(&t);
		got++;
	}
	if (got != count)
		die("read");
	tsr_reader_free(r);
	close(rfd);
	wait_for(child);
	return bench_now() - t0;
}

/*
 * Seconds to pass the frames of the n bytes at buf on, as a stage passes
 * on the records it does not use: read (from memory, so that no process
 * is started in the time) with tsr_reader_set_raw's mode, and written to
 * /dev/null.
 */
static double time_pass(const unsigned char *buf, size_t n, int mode,
			int devnull)
{
	double t0 = bench_now();
	struct tsr_reader *r = tsr_reader_mem(buf, n, "memory");
	struct tsr_writer *w = tsr_writer_fd(devnull, "/dev/null", 0);
	struct frame f = { 0 };
	int rc;

	tsr_reader_set_raw(r, mode);
	while ((rc = tsr_read_frame(r, &f)) == 1)
		if (tsr_write_frame(w, &f) < 0)
			die("write");
	if (rc < 0)
		die("read");
	if (tsr_writer_finish(w) < 0)
		die("close");
	frame_free(&f);
	tsr_reader_free(r);
	return bench_now() - t0;
}

/* A throughput, and its ratio to cat's (bytes per second). */
static void report(const char *what, double bytes, double secs,
		   double cat_rate)
{
	printf("%-34s %8.0f MB/s  %5.2f x cat\n", what, bytes / MIB / secs,
	       bytes / secs / cat_rate);
}

int main(void)
{
	uint64_t dim[2] = { 256, 512 };
	struct tensor t;
	float *v;
	unsigned char *plain, *packed;
	size_t np, nz, payload;
	int devnull = open("/dev/null", O_WRONLY);
	double cat, secs, best;
	uint32_t x = 1;

	/* Activations-like values: a smooth part and noise, so zlib has
	 * about as much to do as on real streams. */
	if (tensor_init(&t, "enc.out", DT_F32, 2, dim) < 0)
		die("tensor");
	v = t.data;
	for (size_t i = 0; i < dim[0] * dim[1]; i++) {
		x = x * 1664525 + 1013904223;
		v[i] = (float)(i % 512) / 64.0f + (float)(x >> 20) / 4096.0f;
	}
	payload = t.nbytes;
	plain = make_stream(&t, RECORDS, 0, &np);
	packed = make_stream(&t, ZRECORDS, 1, &nz);

	printf("records of f32 [256,512] (%.1f MiB each) through a pipe; "
	       "best of 3\n", payload / MIB);
	best = 1e9;
	for (int k = 0; k < 3; k++)
		if ((secs = time_cat(plain, np, devnull)) < best)
			best = secs;
	cat = best;
	printf("%-34s %8.0f MB/s  (baseline)\n", "cat, the same bytes", np / MIB / cat);

	best = 1e9;
	for (int k = 0; k < 3; k++)
		if ((secs = time_write(&t, RECORDS, 0, devnull)) < best)
			best = secs;
	report("write, plain", np, best, np / cat);
	best = 1e9;
	for (int k = 0; k < 3; k++)
		if ((secs = time_read(plain, np, RECORDS)) < best)
			best = secs;
	report("read, plain (CRC checked)", np, best, np / cat);

	/* Compressed: throughput of the payload (uncompressed) bytes. */
	best = 1e9;
	for (int k = 0; k < 3; k++)
		if ((secs = time_write(&t, ZRECORDS, 1, devnull)) < best)
			best = secs;
	report("write, zlib 1 (payload bytes)", (double)ZRECORDS * payload,
	       best, np / cat);
	best = 1e9;
	for (int k = 0; k < 3; k++)
		if ((secs = time_read(packed, nz, ZRECORDS)) < best)
			best = secs;
	report("read, zlib 1 (payload bytes)", (double)ZRECORDS * payload,
	       best, np / cat);
	printf("%-34s %8.1f %% of the payload\n", "zlib 1 stored size",
	       100.0 * nz / ((double)ZRECORDS * payload));

	/* The same records passed on unused, as embed, encode and attend
	 * do: kept as stored and checked (inflated a piece at a time), or
	 * left unchecked; payload bytes per second, and the ratio. */
	{
		double checked = 1e9, lazy = 1e9;

		for (int k = 0; k < 3; k++) {
			if ((secs = time_pass(packed, nz, TSR_RAW_CHECKED,
					      devnull)) < checked)
				checked = secs;
			if ((secs = time_pass(packed, nz, TSR_RAW_LAZY,
					      devnull)) < lazy)
				lazy = secs;
		}
		report("pass on (memory), zlib 1, checked",
		       (double)ZRECORDS * payload, checked, np / cat);
		report("pass on (memory), zlib 1, lazy",
		       (double)ZRECORDS * payload, lazy, np / cat);
		printf("%-34s %8.1f x faster than checked\n",
		       "pass on, lazy", checked / lazy);
	}

	/* A 64 MiB model file: mapped and checked, against cat reading it. */
	{
		char path[] = "/tmp/bench_stream.XXXXXX";
		int fd = mkstemp(path);
		struct tsr_map *m;
		size_t n;
		unsigned char *model = make_stream(&t, RECORDS / 2, 0, &n);
		double map_best = 1e9, cat_best = 1e9;

		if (fd < 0 || write(fd, model, n) != (ssize_t)n)
			exit(1);
		close(fd);
		free(model);
		for (int k = 0; k < 3; k++) {
			double t0 = bench_now();
			pid_t pid = fork();
			if (pid == 0) {
				int in = open(path, O_RDONLY);
				dup2(in, 0);
				dup2(devnull, 1);
				execlp("cat", "cat", (char *)NULL);
				_exit(127);
			}
			wait_for(pid);
			if ((secs = bench_now() - t0) < cat_best)
				cat_best = secs;
			t0 = bench_now();
			if (!(m = tsr_map_open(path)))
				die("map");
			tsr_map_close(m);
			if ((secs = bench_now() - t0) < map_best)
				map_best = secs;
		}
		unlink(path);
		printf("%-34s %8.1f ms  %5.2f x cat's time (%.0f MiB file)\n",
		       "map a model file (CRC checked)", map_best * 1e3,
		       map_best / cat_best, n / MIB);
	}
	tensor_free(&t);
	free(plain);
	free(packed);
	return 0;
}
