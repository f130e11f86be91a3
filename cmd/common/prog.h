/*
 * prog.h: what every program shares: its name in messages, the exit
 * statuses (0 ok, 1 error, 2 usage), --version, and a quiet exit when the
 * reader of its output has gone away.
 */
#ifndef ATTN_PROG_H
#define ATTN_PROG_H

#include <getopt.h>
#include "base/errmsg.h"

#define EXIT_USAGE 2

extern const char *progname;

/* Sets progname from argv[0], a SIGBUS (a mapped file cut short under
 * the program) to a message and exit 1, and glibc to keep freed memory
 * for the next batch (heap.h). */
void prog_init(int argc, char **argv);
/* "NAME (attn) VERSION" on stdout, then prog_help_exit(). */
void prog_version(void) __attribute__((noreturn));
/* The end of --help or --version: stdout flushed, exit 0; a failed
 * write (a full disk) dies naming the cause, exit 1. */
void prog_help_exit(void) __attribute__((noreturn));
/* "NAME: message\n" on stderr; die() then exits 1. */
void warnx_(const char *fmt, ...) ATTN_PRINTF(1, 2);
void die(const char *fmt, ...) ATTN_PRINTF(1, 2) __attribute__((noreturn));
/* die() with the library's last error message. */
void die_err(void) __attribute__((noreturn));
/* For a tsr_* write result: TSR_EPIPE exits 0 quietly, -1 dies. */
void check_write(int rc);
/*
 * Flushes stdout: 0; TSR_EPIPE when its reader has gone; else -1 with
 * err_msg() "<stdout>: " and the cause (No space left on device).  The
 * one way the programs finish their text output.
 */
int prog_flush_stdout(void);
/* After a failed write to stdout: the exit that check_write makes of
 * prog_flush_stdout's answer, the cause named. */
void die_stdout(void) __attribute__((noreturn));
/* "NAME: message (try 'NAME --help')" on stderr, one line, and exit 2. */
void usage_error(const char *fmt, ...) ATTN_PRINTF(1, 2) __attribute__((noreturn));

/* The options every program takes, for its getopt_long table. */
enum { PROG_OPT_THREADS = 0x4000 };
#define PROG_LONGOPTS \
	{ "threads", required_argument, NULL, PROG_OPT_THREADS }

/*
 * getopt_long (getopt_long_only when only) with one message for a bad
 * option: an unknown one or a missing argument is a usage error naming
 * it, in one line (getopt's own message is silenced).  --threads N is
 * taken here: the kernels' thread count, set once for the run.
 */
int prog_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts, int only);

#endif
