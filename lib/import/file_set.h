/*
 * file_set.h: files written together, all or none: each to a temporary
 * file beside it (so that the rename stays in one file system), and only
 * when every one is written are they fsync'ed and renamed into place and
 * their directory fsync'ed.  A failure before then leaves no file, new
 * or temporary, and the old ones as they were.  A path that exists and
 * is not a regular file (a symbolic link, a device, a FIFO, a directory)
 * is refused when opened and again before the renames: the rule of
 * every file written whole, base/outfile.h.
 */
#ifndef ATTN_FILE_SET_H
#define ATTN_FILE_SET_H

#include <stddef.h>

#define FILE_SET_MAX 8

struct file_set {
	int n;
	struct file_set_file {
		char *path, *tmp;
		int fd;
	} f[FILE_SET_MAX];
};

void file_set_init(struct file_set *s);
/* A new member to be written at path: its index, or -1 (err_msg()). */
int file_set_open(struct file_set *s, const char *path);
/* The fd of member i (to hand to a writer that wants one). */
int file_set_fd(const struct file_set *s, int i);
/* Writes n bytes to member i: 0, or -1 (err_msg() naming the file). */
int file_set_write(struct file_set *s, int i, const void *p, size_t n);
/* fsync, close and rename every member, then fsync the directories:
 * 0, or -1 (err_msg()); the set is empty after either. */
int file_set_commit(struct file_set *s);
/* Closes and removes every temporary file; the set is empty after. */
void file_set_abort(struct file_set *s);

#endif
