/*
 * errmsg.h: error messages of the library.  A function that fails sets one
 * message (err_set) and returns -1 or NULL; its caller may add context in
 * front (err_prefix) and the program prints it (prog.h).
 */
#ifndef ATTN_ERRMSG_H
#define ATTN_ERRMSG_H

/* Public: libtensor.so exports what is declared from here to the pop (the
 * library is built with -fvisibility=hidden; see the Makefile). */
#pragma GCC visibility push(default)

#if defined(__GNUC__)
#define ATTN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ATTN_PRINTF(a, b)
#endif

void err_set(const char *fmt, ...) ATTN_PRINTF(1, 2);
/* Puts "context: " in front of the current message. */
void err_prefix(const char *fmt, ...) ATTN_PRINTF(1, 2);
const char *err_msg(void);
void err_clear(void);

#pragma GCC visibility pop

#endif
