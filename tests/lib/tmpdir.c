/* tmpdir.c: see tmpdir.h. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "tmpdir.h"

static char dir[64];

void tmpdir_setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX",
		 program_invocation_short_name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void tmpdir_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

char *tmpdir_path(const char *name)
{
	static char buf[8][128];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}
