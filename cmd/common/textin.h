/*
 * textin.h: lines of text from files, as tokenize reads them: any bytes
 * (NUL, invalid UTF-8), a CR kept, a last line without a newline a line.
 * Errors die naming the file and the line (prog.h).
 */
#ifndef ATTN_TEXTIN_H
#define ATTN_TEXTIN_H

#include <stdint.h>
#include <stdio.h>

struct input {
	FILE *f;
	const char *label;
	unsigned long lineno;
	int interactive;        /* not a regular file: flush every line */
	char *line;
	size_t cap;
	uint64_t max;           /* the longest line (--max-line) */
};

/* path ("-": standard input) opened for input_line, max the longest line
 * taken. */
void input_open(struct input *in, const char *path, uint64_t max);

/*
 * The next line without its newline, or NULL at the end (the file then
 * closed, but standard input).  A line longer than max is refused before
 * more of it is read, and every error (of reading, of memory) names the
 * line: never taken for the end; so is a tensor stream's first line.
 */
char *input_line(struct input *in, size_t *len);

#endif
