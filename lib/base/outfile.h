/*
 * outfile.h: what a file written whole may replace.  Every writer that
 * makes a file beside its target and renames it into place (a model,
 * its exports, the word aligner's model, a Marian export's files)
 * asks here first, when it opens and again just before the rename, so
 * that one rule holds for all of them: the target is absent or a
 * regular file, and anything else there is refused and left as it is.
 *
 * A symbolic link is refused, not followed, whether it points to a
 * regular file or nowhere: a rename would replace the link itself and
 * leave stale the file it named; following it would write in another
 * directory (perhaps another file system, and as root a link planted in
 * a shared directory would redirect the write to any file), away from
 * the lock, the checkpoints and the temporary file that live beside the
 * name given.  Name the file itself instead (readlink -f).  A device, a
 * FIFO, a socket or a directory is refused as well: a rename would put
 * a regular file in its place (as root, /dev/full replaced).
 */
#ifndef ATTN_OUTFILE_H
#define ATTN_OUTFILE_H

/* 0 if path names nothing or a regular file; -1 with err_msg() naming
 * it and what it is otherwise.  A path that cannot be examined (lstat
 * fails but for ENOENT) is left to the writer, whose temporary file
 * then fails with the reason. */
int outfile_check(const char *path);

#endif
