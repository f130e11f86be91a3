/* modellock.c: a program's lock on its model until exit (modellock.h). */
#include <stdlib.h>
#include "modellock.h"
#include "prog.h"
#include "run/train.h"

static const char *locked_path;
static int locked_fd = -1;

static void unlock_at_exit(void)
{
	train_unlock(locked_path, locked_fd);
}

void lock_model(const char *path)
{
	if ((locked_fd = train_lock(path)) < 0)
		die_err();
	locked_path = path;
	atexit(unlock_at_exit);
}
