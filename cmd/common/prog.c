/* prog.c: the programs' shared conventions; see prog.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"
#include "stream/stream.h"

const char *progname = "attn";

void prog_init(int argc, char **argv)
{
	const char *s;

	(void)argc;
	if (argv && argv[0]) {
		s = strrchr(argv[0], '/');
		progname = s ? s + 1 : argv[0];
	}
}

void prog_version(void)
{
	printf("%s (attn) %s\n", progname, ATTN_VERSION);
	exit(0);
}

static void vwarn(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
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

void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", progname);
	exit(EXIT_USAGE);
}
