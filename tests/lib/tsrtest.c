/* tsrtest.c: helpers for tests that build tensor streams; see tsrtest.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "tsrtest.h"

void tt_stream_open(struct tt_stream *s, int zlib_level)
{
	s->fd = memfd_create("tsrtest", MFD_CLOEXEC);
	ck_assert_msg(s->fd >= 0, "memfd_create: %s", strerror(errno));
	s->w = tsr_writer_fd(s->fd, "test-out", zlib_level);
	ck_assert_ptr_nonnull(s->w);
}

static unsigned char *stream_bytes(struct tt_stream *s, size_t *n,
				   int mark)
{
	unsigned char *p;
	off_t size;

	ck_assert_msg((mark ? tsr_writer_finish(s->w) :
		       tsr_writer_close(s->w)) == 0, "%s", err_msg());
	s->w = NULL;
	size = lseek(s->fd, 0, SEEK_END);
	ck_assert_int_ge(size, 0);
	p = malloc(size ? size : 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pread(s->fd, p, size, 0), size);
	close(s->fd);
	*n = size;
	return p;
}

unsigned char *tt_stream_bytes(struct tt_stream *s, size_t *n)
{
	return stream_bytes(s, n, 1);
}

unsigned char *tt_stream_unmarked(struct tt_stream *s, size_t *n)
{
	return stream_bytes(s, n, 0);
}

struct tsr_reader *tt_stream_reader(struct tt_stream *s, const char *label)
{
	struct tsr_reader *r;
	size_t n;
	unsigned char *p = tt_stream_bytes(s, &n);

	r = tsr_reader_mem(p, n, label);
	ck_assert_ptr_nonnull(r);
	free(p);
	return r;
}

void tt_tensor(struct tensor *t, const char *name, int dtype, int rank,
	       const uint64_t *dim, uint32_t seed)
{
	unsigned char *p;
	uint32_t x = seed * 2654435761u + 1;

	ck_assert_msg(tensor_init(t, name, dtype, rank, dim) == 0, "%s",
		      err_msg());
	p = t->data;
	for (size_t i = 0; i < t->nbytes; i++) {
		x ^= x << 13;           /* xorshift32 */
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x >> 24;
	}
}

int tt_pipe_bytes(const void *p, size_t n, size_t chunk, pid_t *pid)
{
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	*pid = fork();
	ck_assert_int_ge(*pid, 0);
	if (*pid == 0) {
		const unsigned char *b = p;
		close(fds[0]);
		for (size_t off = 0; off < n;) {
			size_t k = n - off < chunk ? n - off : chunk;
			ssize_t w = write(fds[1], b + off, k);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				_exit(1);
			off += w;
		}
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

int tt_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void tt_write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}
