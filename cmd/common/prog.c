/* prog.c: the programs' shared conventions; see prog.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernels/kernels.h"
#include "heap.h"
#include "opt.h"
#include "prog.h"
#include "stream/stream.h"

const char *progname = "attn";

/*
 * A mapped file cut short under a running program (a model overwritten
 * in place, as cp does, instead of replaced by rename) makes its next
 * read of the lost pages a SIGBUS: said here, exit 1, rather than a bare
 * "Bus error".  Only async-signal-safe calls.
 */
static void on_sigbus(int sig)
{
	static const char msg[] = ": bus error: a mapped file (a model?) "
		"was cut short while in use; replace model files by rename "
		"(mv), never in place (cp)\n";
	ssize_t k;

	(void)sig;
	k = write(2, progname, strlen(progname));
	k = write(2, msg, sizeof msg - 1);
	(void)k;
	_exit(1);
}

void prog_init(int argc, char **argv)
{
	struct sigaction sa;
	const char *s;

	(void)argc;
	if (argv && argv[0]) {
		s = strrchr(argv[0], '/');
		progname = s ? s + 1 : argv[0];
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	heap_keep_freed();
}

void prog_version(void)
{
	printf("%s (attn) %s\n", progname, ATTN_VERSION);
	prog_help_exit();
}

void prog_help_exit(void)
{
	check_write(prog_flush_stdout());
	exit(0);
}

/* The line is written whole, in one write where it fits: the programs of
 * a pipeline share one stderr, and a message written in parts could be
 * cut by another's (a shell's "Killed" was seen inside one). */
static void vwarn(const char *fmt, va_list ap, const char *tail)
{
	char line[4096];
	int n = snprintf(line, sizeof line, "%s: ", progname);
	va_list aq;

	fflush(stdout);
	va_copy(aq, ap);
	if (n >= 0 && (size_t)n < sizeof line)
		n += vsnprintf(line + n, sizeof line - n, fmt, aq);
	va_end(aq);
	if (n >= 0 && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - n, "%s\n", tail);
	if (n < 0 || (size_t)n >= sizeof line) {
		/* too long for one write: the whole text, in parts */
		fprintf(stderr, "%s: ", progname);
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "%s\n", tail);
		return;
	}
	fwrite(line, 1, (size_t)n, stderr);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap, "");
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap, "");
	va_end(ap);
	exit(1);
}

void die_err(void)
{
	die("%s", err_msg());
}

void check_write(int rc)
{
	if (rc == TSR_EPIPE)
		exit(0);
	if (rc < 0)
		die_err();
}

int prog_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (errno == EPIPE)
		return TSR_EPIPE;
	err_set("<stdout>: %s", errno ? strerror(errno) : "write error");
	return -1;
}

void die_stdout(void)
{
	int e = errno;

	if (e == EPIPE)
		exit(0);
	die("<stdout>: %s", e ? strerror(e) : "write error");
}

void usage_error(const char *fmt, ...)
{
	char tail[300];
	va_list ap;

	snprintf(tail, sizeof tail, " (try '%s --help')", progname);
	va_start(ap, fmt);
	vwarn(fmt, ap, tail);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* The usage error for what getopt refused, bad the word it stopped at. */
static void bad_option(const char *bad, const char *shortopts,
		       const struct option *longopts, int only)
{
	const char *name = bad + 1 + (bad[1] == '-');
	size_t n = strcspn(name, "=");
	int i;

	if (optopt == 0)
		usage_error("unknown option '%s'", bad);
	if (bad[1] == '-' || (only && n > 1))
		for (i = 0; longopts[i].name; i++)
			if (longopts[i].val == optopt &&
			    strlen(longopts[i].name) == n &&
			    strncmp(longopts[i].name, name, n) == 0)
				usage_error("option '%.*s' %s", (int)(name -
					    bad + n), bad,
					    longopts[i].has_arg == no_argument ?
					    "takes no argument" :
					    "needs an argument");
	if (optopt < 256 && strchr(shortopts, optopt))
		usage_error("option '-%c' needs an argument", optopt);
	usage_error("unknown option '-%c'", optopt);
}

/* The threads of the kernels: at most this many (a typo's guard). */
#define THREADS_MAX 1024

int prog_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts, int only)
{
	int c;

	opterr = 0;
	for (;;) {
		c = only ? getopt_long_only(argc, argv, shortopts, longopts, NULL)
			 : getopt_long(argc, argv, shortopts, longopts, NULL);
		if (c != PROG_OPT_THREADS)
			break;
		kern_set_threads(opt_int(optarg, "--threads", 1,
					 THREADS_MAX));
	}
	if (c == '?')	/* argv[optind - 1]: the word getopt stopped at */
		bad_option(argv[optind - 1], shortopts, longopts, only);
	return c;
}
