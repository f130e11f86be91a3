/* opt.c: the programs' option arguments (opt.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "prog.h"

/* 0 with *v, or -1 when arg is not an integer in [min, max]. */
static int parse_int(const char *arg, long long min, long long max,
		     long long *v)
{
	const char *d = arg[0] == '-' && min < 0 ? arg + 1 : arg;
	char *end;

	if (*d < '0' || *d > '9')
		return -1;
	errno = 0;
	*v = strtoll(arg, &end, 10);
	return *end || errno || *v < min || *v > max ? -1 : 0;
}

long long opt_int(const char *arg, const char *option, long long min,
		  long long max)
{
	long long v;

	if (parse_int(arg, min, max, &v) == 0)
		return v;
	if (max == LLONG_MAX)
		usage_error("option %s: '%s' is not an integer of at least "
			    "%lld", option, arg, min);
	usage_error("option %s: '%s' is not an integer from %lld to %lld",
		    option, arg, min, max);
}

int opt_positive(const char *arg, const char *option)
{
	long long v;

	if (parse_int(arg, 1, INT_MAX, &v) < 0)
		usage_error("option %s: '%s' is not a positive integer",
			    option, arg);
	return (int)v;
}

double opt_number(const char *arg, const char *option)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v))
		usage_error("option %s: '%s' is not a finite number", option,
			    arg);
	return v;
}

int opt_half(const char *arg, const char *option, const char *half)
{
	if (strcmp(arg, "f32") != 0 && strcmp(arg, half) != 0)
		usage_error("option %s: '%s' is neither f32 nor %s", option,
			    arg, half);
	return strcmp(arg, half) == 0;
}

uint64_t opt_bytes(const char *arg, const char *option)
{
	static const char suffix[] = "kMG";
	const char *p;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	p = *end ? strchr(suffix, *end) : NULL;
	if (p && end[1] == 0) {
		if (v > (1ULL << 62) >> 10 * (p - suffix + 1))
			v = 0;	/* out of range */
		v <<= 10 * (p - suffix + 1);
		end++;
	}
	if (*arg < '0' || *arg > '9' || *end || errno || v < 1 ||
	    v > 1ULL << 62)
		usage_error("option %s: '%s' is not a byte count from 1 to "
			    "2^62 (suffix k, M or G)", option, arg);
	return v;
}
