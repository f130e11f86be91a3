/*
 * file_set.c: files written all or none (file_set.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "base/outfile.h"
#include "file_set.h"

void file_set_init(struct file_set *s)
{
	memset(s, 0, sizeof *s);
}

int file_set_open(struct file_set *s, const char *path)
{
	struct file_set_file *f = &s->f[s->n];
	mode_t mask;

	if (s->n == FILE_SET_MAX) {
		err_set("%s: more than %d files at once", path,
			FILE_SET_MAX);
		return -1;
	}
	if (outfile_check(path) < 0)
		return -1;
	if (asprintf(&f->tmp, "%s.tmpXXXXXX", path) < 0) {
		f->tmp = NULL;
		err_set("%s: out of memory", path);
		return -1;
	}
	if (!(f->path = strdup(path))) {
		free(f->tmp);
		err_set("%s: out of memory", path);
		return -1;
	}
	if ((f->fd = mkostemp(f->tmp, O_CLOEXEC)) < 0) {
		err_set("%s: cannot create a temporary file: %s", f->tmp,
			strerror(errno));
		free(f->tmp);
		free(f->path);
		return -1;
	}
	/* mkostemp makes it 0600; a model is as readable as any file */
	mask = umask(0);
	umask(mask);
	if (fchmod(f->fd, 0666 & ~mask) < 0) {
		err_set("%s: chmod: %s", f->tmp, strerror(errno));
		close(f->fd);
		unlink(f->tmp);
		free(f->tmp);
		free(f->path);
		return -1;
	}
	return s->n++;
}

int file_set_fd(const struct file_set *s, int i)
{
	return s->f[i].fd;
}

int file_set_write(struct file_set *s, int i, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t k = write(s->f[i].fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err_set("%s: write error: %s", s->f[i].path,
				strerror(errno));
			return -1;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void release(struct file_set *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->f[i].path);
		free(s->f[i].tmp);
	}
	s->n = 0;
}

void file_set_abort(struct file_set *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->f[i].fd >= 0)
			close(s->f[i].fd);
		unlink(s->f[i].tmp);
	}
	release(s);
}

/* fsync of the directory that holds path: the renames made durable. */
static int sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = -1;

	if (!copy) {
		err_set("out of memory");
		return -1;
	}
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	if (rc < 0)
		err_set("%s: fsync of its directory: %s", path,
			strerror(errno));
	free(copy);
	return rc;
}

int file_set_commit(struct file_set *s)
{
	int i, rc = 0;

	for (i = 0; i < s->n && rc == 0; i++) {
		struct file_set_file *f = &s->f[i];

		if (fsync(f->fd) < 0) {
			err_set("%s: fsync: %s", f->tmp, strerror(errno));
			rc = -1;
		}
		if (close(f->fd) < 0 && rc == 0) {
			err_set("%s: close: %s", f->tmp, strerror(errno));
			rc = -1;
		}
		f->fd = -1;
	}
	if (rc < 0) {
		file_set_abort(s);
		return -1;
	}
	/* every file is whole on disk; what is at each path now, then the
	 * renames, which do not fail but for a vanished directory */
	for (i = 0; i < s->n; i++)
		if (outfile_check(s->f[i].path) < 0) {
			file_set_abort(s);
			return -1;
		}
	for (i = 0; i < s->n; i++)
		if (rename(s->f[i].tmp, s->f[i].path) < 0) {
			err_set("cannot rename %s to %s: %s", s->f[i].tmp,
				s->f[i].path, strerror(errno));
			for (; i < s->n; i++)
				unlink(s->f[i].tmp);
			release(s);
			return -1;
		}
	for (i = 0; i < s->n && rc == 0; i++)
		rc = sync_dir(s->f[i].path);
	release(s);
	return rc;
}
