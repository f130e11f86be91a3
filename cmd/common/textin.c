/* textin.c: lines of text from files, as tokenize reads them; see
 * textin.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "prog.h"
#include "textin.h"

void input_open(struct input *in, const char *path, uint64_t max)
{
	struct stat st;

	in->lineno = 0;
	in->max = max;
	if (!strcmp(path, "-")) {
		in->f = stdin;
		in->label = "<stdin>";
	} else if (!(in->f = fopen(path, "r"))) {
		die("%s: %s", path, strerror(errno));
	} else {
		in->label = path;
	}
	in->interactive = fstat(fileno(in->f), &st) < 0 || !S_ISREG(st.st_mode);
}

char *input_line(struct input *in, size_t *len)
{
	size_t n = 0;
	char *p;
	int c;

	flockfile(in->f);
	while ((c = getc_unlocked(in->f)) != EOF) {
		if (n + 1 >= in->cap) {	/* room for c and a NUL */
			size_t cap = in->cap ? 2 * in->cap : 256;

			if (cap > in->max + 2)
				cap = in->max + 2;
			if (!(p = realloc(in->line, cap)))
				die("%s:%lu: out of memory for a line of more "
				    "than %zu bytes", in->label,
				    in->lineno + 1, n);
			in->line = p;
			in->cap = cap;
		}
		in->line[n++] = (char)c;
		if (c == '\n')
			break;
		if (n > in->max)
			die("%s:%lu: a line longer than %llu bytes "
			    "(--max-line)", in->label, in->lineno + 1,
			    (unsigned long long)in->max);
	}
	funlockfile(in->f);
	if (c == EOF && ferror(in->f))
		die("%s:%lu: %s", in->label, in->lineno + 1,
		    strerror(errno ? errno : EIO));
	if (c == EOF && n == 0) {
		if (in->f != stdin)
			fclose(in->f);
		return NULL;
	}
	in->line[n] = 0;
	/* a stream's magic and version: not text (tokenize -d reads it) */
	if (in->lineno++ == 0 && n >= 5 && memcmp(in->line, "TNSR\1", 5) == 0)
		die("%s: a tensor stream, not text", in->label);
	if (n > 0 && in->line[n - 1] == '\n')
		n--;
	*len = n;
	return in->line;
}
