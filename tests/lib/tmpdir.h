/*
 * tmpdir.h: a fresh directory under /tmp for each test, as a Check
 * fixture, and the paths of files in it:
 *
 *	tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
 *	model_save(m, tmpdir_path("m.tsr"), NULL, 0);
 */
#ifndef ATTN_TMPDIR_H
#define ATTN_TMPDIR_H

/* Makes /tmp/PROGRAM.XXXXXX (PROGRAM: the test binary's name). */
void tmpdir_setup(void);
/* Removes it, with all in it. */
void tmpdir_teardown(void);
/* DIR/name, in one of 8 static buffers used in turn (so up to 8 paths
 * can be live at once, as the arguments of one call). */
char *tmpdir_path(const char *name);

#endif
