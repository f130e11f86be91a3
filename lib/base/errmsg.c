/* errmsg.c: one error message per thread; see errmsg.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "errmsg.h"

static _Thread_local char msg[1024];

void err_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
}

void err_prefix(const char *fmt, ...)
{
	char old[sizeof msg];
	va_list ap;
	int n;

	memcpy(old, msg, sizeof msg);
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof msg)
		snprintf(msg + n, sizeof msg - n, ": %s", old);
}

const char *err_msg(void)
{
	return msg[0] ? msg : "unknown error";
}

void err_clear(void)
{
	msg[0] = 0;
}
