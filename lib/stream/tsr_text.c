/* tsr_text.c: the text form of tensor records; see tsr_text.h. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "tsr_text.h"

#define PER_LINE 16     /* values per line within a row */

/* ---- values ------------------------------------------------------------- */

/* The quiet NaN each float type makes by default, printed as "nan". */
static const struct {
	int dtype;
	uint64_t nan, sign;
} nans[] = {
	{ DT_F32, 0x7fc00000, 0x80000000 },
	{ DT_F64, 0x7ff8000000000000, 0x8000000000000000 },
	{ DT_F16, 0x7e00, 0x8000 },
	{ DT_BF16, 0x7fc0, 0x8000 },
};

static uint64_t load_bits(const void *p, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, p, size);    /* little-endian host */
	return v;
}

/* The bits of the float type dtype nearest to the decimal at s. */
static uint64_t parse_bits(const char *s, char **end, int dtype)
{
	float f;
	double d;
	uint16_t h;

	switch (dtype) {
	case DT_F64:
		d = strtod(s, end);
		return load_bits(&d, 8);
	case DT_F32:
		f = strtof(s, end);
		return load_bits(&f, 4);
	case DT_F16:
		h = f32_to_f16(strtof(s, end));
		return h;
	default:
		h = f32_to_bf16(strtof(s, end));
		return h;
	}
}

static int format_float(char *out, size_t cap, const void *p, int dtype)
{
	size_t size = dtype_size(dtype);
	uint64_t bits = load_bits(p, size), sign = 0, nan = 0;
	double v;
	int prec, last;

	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
		if (nans[i].dtype == dtype) {
			nan = nans[i].nan;
			sign = nans[i].sign;
		}
	switch (dtype) {
	case DT_F64: { double d; memcpy(&d, p, 8); v = d; prec = 15; last = 17; break; }
	case DT_F32: { float f; memcpy(&f, p, 4); v = f; prec = 6; last = 9; break; }
	case DT_F16: v = f16_to_f32(bits); prec = 3; last = 9; break;
	default: v = bf16_to_f32(bits); prec = 3; last = 9; break;
	}
	if (isnan(v)) {
		if (bits == nan)
			return snprintf(out, cap, "nan");
		if (bits == (nan | sign))
			return snprintf(out, cap, "-nan");
		return snprintf(out, cap, "nan:0x%0*" PRIx64, (int)size * 2,
				bits);
	}
	if (isinf(v))
		return snprintf(out, cap, v < 0 ? "-inf" : "inf");
	/* The fewest digits (from a usual count up) that read back exactly. */
	for (; prec < last; prec++) {
		char *end;
		snprintf(out, cap, "%.*g", prec, v);
		if (parse_bits(out, &end, dtype) == bits)
			break;
	}
	return snprintf(out, cap, "%.*g", prec, v);
}

int tsr_text_value(char *out, size_t cap, const void *p, int dtype)
{
	int8_t i8;
	int32_t i32;
	int64_t i64;

	switch (dtype) {
	case DT_I32: memcpy(&i32, p, 4); return snprintf(out, cap, "%" PRId32, i32);
	case DT_I8: memcpy(&i8, p, 1); return snprintf(out, cap, "%d", i8);
	case DT_U8: return snprintf(out, cap, "%u", *(const uint8_t *)p);
	case DT_I64: memcpy(&i64, p, 8); return snprintf(out, cap, "%" PRId64, i64);
	default: return format_float(out, cap, p, dtype);
	}
}

/* ---- printing ----------------------------------------------------------- */

/* Bytes that read well as a string: printable ASCII, tab, newline, and
 * well-formed UTF-8 sequences. */
static int is_text(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], len;
		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
			i++;
			continue;
		}
		len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		      c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!len || i + len > n)
			return 0;
		for (unsigned k = 1; k < len; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
		i += len;
	}
	return 1;
}

/* The bytes as "strings", a line break after each newline. */
static void print_string(FILE *out, const unsigned char *p, size_t n)
{
	putc('"', out);
	for (size_t i = 0; i < n; i++) {
		switch (p[i]) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\t': fputs("\\t", out); break;
		case '\n':
			fputs(i + 1 < n ? "\\n\"\n\"" : "\\n", out);
			break;
		default: putc(p[i], out);
		}
	}
	fputs("\"\n", out);
}

static void print_shape(FILE *out, const struct tensor *t)
{
	putc('[', out);
	for (int i = 0; i < t->rank; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, t->dim[i]);
	putc(']', out);
}

int tsr_text_print(FILE *out, const struct tensor *t,
		   const struct tsr_text_attr *a)
{
	size_t size = dtype_size(t->dtype), n = t->nbytes / size;
	size_t row = t->rank ? t->dim[t->rank - 1] : 1;
	const unsigned char *p = t->data;
	char buf[64];

	fprintf(out, "record %s %s ", t->name, dtype_name(t->dtype));
	print_shape(out, t);
	fprintf(out, " frame %" PRIu64, a->frame);
	if (a->flags & TSR_FLAG_END_FRAME)
		fputs(" end", out);
	if (a->flags & TSR_FLAG_ZLIB)
		fprintf(out, a->level ? " zlib %d" : " zlib", a->level);
	if (a->pad >= 0)
		fprintf(out, " pad %d", a->pad);
	putc('\n', out);
	if ((t->dtype == DT_U8 || t->dtype == DT_I8) && t->rank == 1 && n &&
	    is_text(p, n)) {
		print_string(out, p, n);
	} else {
		for (size_t i = 0; i < n; i++) {
			tsr_text_value(buf, sizeof buf, p + i * size, t->dtype);
			fputs(buf, out);
			putc((i + 1) % row == 0 || (i % row + 1) % PER_LINE == 0
			     ? '\n' : ' ', out);
		}
	}
	return ferror(out) ? -1 : 0;
}

/* ---- reading ------------------------------------------------------------ */

struct tsr_text_reader {
	FILE *in;
	char *label;
	char *line;
	size_t cap;
	long lineno;
	int have_line;          /* a record line read ahead */
	int started;            /* past the optional first line */
	size_t room;            /* bytes allocated for the record's values */
};

struct tsr_text_reader *tsr_text_open(FILE *in, const char *label)
{
	struct tsr_text_reader *r = calloc(1, sizeof *r);

	if (!r || !(r->label = strdup(label))) {
		free(r);
		err_set("%s: out of memory", label);
		return NULL;
	}
	r->in = in;
	return r;
}

void tsr_text_close(struct tsr_text_reader *r)
{
	if (!r)
		return;
	free(r->line);
	free(r->label);
	free(r);
}

static int fail(struct tsr_text_reader *r, const struct tensor *t,
		const char *fmt, ...) ATTN_PRINTF(3, 4);

static int fail(struct tsr_text_reader *r, const struct tensor *t,
		const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (t && t->name[0])
		err_set("%s:%ld: record \"%s\": %s", r->label, r->lineno,
			t->name, msg);
	else
		err_set("%s:%ld: %s", r->label, r->lineno, msg);
	return -1;
}

/* Reads the next line without its newline; 0 at the end of input. */
static int next_line(struct tsr_text_reader *r)
{
	ssize_t n;

	if (r->have_line) {
		r->have_line = 0;
		return 1;
	}
	errno = 0;
	n = getline(&r->line, &r->cap, r->in);
	if (n < 0) {
		/* the end only when feof says so: getline also fails with
		 * ENOMEM on a line too long for memory, error flag unset */
		if (ferror(r->in) || !feof(r->in)) {
			int e = errno ? errno : EIO;

			r->lineno++;
			return fail(r, NULL, "read error: %s", strerror(e));
		}
		return 0;
	}
	r->lineno++;
	if (n && r->line[n - 1] == '\n')
		r->line[--n] = 0;
	if ((size_t)n != strlen(r->line))
		return fail(r, NULL, "a NUL byte in the text");
	return 1;
}

static char *skip_blanks(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

/* Cuts the next blank-separated word off *s; NULL at the line's end. */
static char *word(char **s)
{
	char *w = skip_blanks(*s), *e;

	if (!*w || *w == '#')
		return NULL;
	for (e = w; *e && *e != ' ' && *e != '\t' && *e != '\r'; e++)
		;
	if (*e)
		*e++ = 0;
	*s = e;
	return w;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_int(const char *s, long lo, long hi, int *v)
{
	uint64_t u;

	if (parse_u64(s, &u) < 0 || u < (uint64_t)lo || u > (uint64_t)hi)
		return -1;
	*v = u;
	return 0;
}

static int parse_shape(char *s, struct tensor *t)
{
	size_t n = strlen(s);

	if (n < 2 || s[0] != '[' || s[n - 1] != ']')
		return -1;
	s[n - 1] = 0;
	t->rank = 0;
	for (char *p = s + 1; *p;) {
		char *comma = strchr(p, ',');
		if (t->rank == TENSOR_MAX_RANK)
			return -1;
		if (comma)
			*comma = 0;
		if (parse_u64(p, &t->dim[t->rank++]) < 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
		if (!*p)
			return -1;
	}
	return 0;
}

static int parse_record_line(struct tsr_text_reader *r, struct tensor *t,
			     struct tsr_text_attr *a)
{
	char *s = r->line, *w, *name, *dt, *shape, shown[200];
	struct tensor shp = { .rank = 0 };
	int dtype;

	word(&s);               /* "record" */
	name = word(&s);
	dt = word(&s);
	shape = word(&s);
	if (!name || !dt || !shape)
		return fail(r, NULL, "want: record NAME DTYPE [DIMS] ...");
	if (!tensor_name_ok(name, strlen(name)))
		return fail(r, NULL, "bad record name \"%s\": want 1 to %d "
			    "of A-Z a-z 0-9 . _ : - /", name, TENSOR_NAME_MAX);
	if (!(dtype = dtype_parse(dt)))
		return fail(r, NULL, "record \"%s\": unknown dtype \"%s\"",
			    name, dt);
	snprintf(shown, sizeof shown, "%s", shape);
	if (parse_shape(shape, &shp) < 0)
		return fail(r, NULL, "record \"%s\": bad shape \"%s\": want "
			    "[] or [N,...] of up to %d dims", name, shown,
			    TENSOR_MAX_RANK);
	memset(a, 0, sizeof *a);
	a->pad = -1;
	while ((w = word(&s))) {
		char *arg;
		if (strcmp(w, "end") == 0) {
			a->flags |= TSR_FLAG_END_FRAME;
		} else if (strcmp(w, "zlib") == 0) {
			a->flags |= TSR_FLAG_ZLIB;
			if (isdigit((unsigned char)*skip_blanks(s)) &&
			    parse_int(word(&s), 1, 9, &a->level) < 0)
				return fail(r, NULL, "record \"%s\": zlib level "
					    "not in 1..9", name);
		} else if (strcmp(w, "frame") == 0) {
			if (!(arg = word(&s)) || parse_u64(arg, &a->frame) < 0)
				return fail(r, NULL, "record \"%s\": frame "
					    "wants a number", name);
		} else if (strcmp(w, "pad") == 0) {
			if (!(arg = word(&s)) || parse_int(arg, 0, 63, &a->pad) < 0)
				return fail(r, NULL, "record \"%s\": pad wants "
					    "a number in 0..63", name);
		} else {
			return fail(r, NULL, "record \"%s\": unknown word "
				    "\"%s\" (want frame N, end, zlib [LEVEL], "
				    "pad N)", name, w);
		}
	}
	/* The payload grows as values arrive, so a shape that the text does
	 * not fill costs nothing; tensor_init checks the name and type. */
	if (tensor_init(t, name, dtype, 0, NULL) < 0)
		return fail(r, NULL, "%s", err_msg());
	r->room = t->nbytes;
	t->rank = shp.rank;
	memcpy(t->dim, shp.dim, sizeof t->dim);
	/* As a reader checks it: the non-zero dims within the limit. */
	for (int i = 0; i < t->rank; i++) {
		if (!t->dim[i])
			continue;
		if (t->dim[i] > TSR_DEFAULT_LIMIT / t->nbytes) {
			tensor_free(t);
			return fail(r, NULL, "record \"%s\": shape %s exceeds "
				    "%llu bytes", name, shown,
				    (unsigned long long)TSR_DEFAULT_LIMIT);
		}
		t->nbytes *= t->dim[i];
	}
	for (int i = 0; i < t->rank; i++)
		if (!t->dim[i])
			t->nbytes = 0;
	return 0;
}

/* Parses a float token into the element at p. */
static int parse_float(const char *w, void *p, int dtype)
{
	size_t size = dtype_size(dtype);
	const char *s = w + (*w == '-' || *w == '+');
	uint64_t bits = 0, sign = 0;
	char *end;

	for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
		if (nans[i].dtype == dtype) {
			bits = nans[i].nan;
			sign = *w == '-' ? nans[i].sign : 0;
		}
	if (strcmp(s, "nan") == 0) {
		bits |= sign;
	} else if (strcmp(s, "inf") == 0) {
		float f = INFINITY;
		switch (dtype) {
		case DT_F64: { double d = INFINITY; bits = load_bits(&d, 8); break; }
		case DT_F32: bits = load_bits(&f, 4); break;
		case DT_F16: bits = f32_to_f16(f); break;
		default: bits = f32_to_bf16(f); break;
		}
		bits |= sign;
	} else if (strncmp(w, "nan:0x", 6) == 0) {
		errno = 0;
		bits = strtoull(w + 6, &end, 16);
		if (errno || *end || !isxdigit((unsigned char)w[6]) ||
		    (size < 8 && bits >> (8 * size)))
			return -1;
		/* It must be a NaN: all exponent bits set, some mantissa. */
		switch (dtype) {
		case DT_F64: { double d; memcpy(&d, &bits, 8); if (!isnan(d)) return -1; break; }
		case DT_F32: { float f; memcpy(&f, &bits, 4); if (!isnan(f)) return -1; break; }
		case DT_F16: if (!isnan(f16_to_f32(bits))) return -1; break;
		default: if (!isnan(bf16_to_f32(bits))) return -1; break;
		}
	} else {
		/* Letters other than in a number's exponent or hex digits
		 * (strtod's "infinity", "nan(...)") are not accepted. */
		if (!isdigit((unsigned char)*s) && *s != '.')
			return -1;
		bits = parse_bits(w, &end, dtype);
		if (*end)
			return -1;
	}
	memcpy(p, &bits, size);
	return 0;
}

static int parse_integer(const char *w, void *p, int dtype)
{
	long long v;
	char *end;
	int8_t i8;
	int32_t i32;

	if (!isdigit((unsigned char)w[*w == '-' || *w == '+']))
		return -1;
	errno = 0;
	v = strtoll(w, &end, 10);
	if (errno || *end)
		return -1;
	switch (dtype) {
	case DT_I64: memcpy(p, &v, 8); return 0;
	case DT_I32:
		if (v < INT32_MIN || v > INT32_MAX)
			return -1;
		i32 = v;
		memcpy(p, &i32, 4);
		return 0;
	case DT_I8:
		if (v < -128 || v > 127)
			return -1;
		i8 = v;
		memcpy(p, &i8, 1);
		return 0;
	default:
		if (v < 0 || v > 255)
			return -1;
		*(uint8_t *)p = v;
		return 0;
	}
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Makes room for element n of t. */
static int reserve(struct tsr_text_reader *r, struct tensor *t, size_t n)
{
	size_t size = dtype_size(t->dtype), want;
	void *p;

	if ((n + 1) * size <= r->room)
		return 0;
	if (n * size >= t->nbytes)
		return fail(r, t, "more values than the shape holds (%zu)",
			    t->nbytes / size);
	want = r->room * 2 > (n + 1) * size ? r->room * 2 : (n + 1) * size;
	want = want < t->nbytes ? want : t->nbytes;
	if (!(p = tensor_alloc(want)))
		return fail(r, t, "out of memory for %zu bytes", want);
	memcpy(p, t->data, n * size);
	free(t->data);
	t->data = p;
	r->room = want;
	return 0;
}

/* Parses the "string" at *s (past the quote) into t from element *n. */
static int parse_string(struct tsr_text_reader *r, struct tensor *t,
			char **s, size_t *n)
{
	char *p = *s;

	if (t->dtype != DT_U8 && t->dtype != DT_I8)
		return fail(r, t, "a string is only for u8 and i8 values");
	for (;;) {
		int c = (unsigned char)*p++;
		if (c == 0)
			return fail(r, t, "string not closed on its line");
		if (c == '"')
			break;
		if (c == '\\') {
			switch (*p++) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case 'x':
				if (hexval((unsigned char)p[0]) < 0 ||
				    hexval((unsigned char)p[1]) < 0)
					return fail(r, t, "\\x wants two hex "
						    "digits");
				c = hexval((unsigned char)p[0]) * 16 +
				    hexval((unsigned char)p[1]);
				p += 2;
				break;
			default:
				return fail(r, t, "unknown escape \\%c in a "
					    "string (want \\n \\t \\r \\\" "
					    "\\\\ \\xNN)", p[-1] ? p[-1] : '0');
			}
		}
		if (reserve(r, t, *n) < 0)
			return -1;
		((unsigned char *)t->data)[(*n)++] = c;
	}
	*s = p;
	return 0;
}

/* Parses the values on the current line into t from element *n. */
static int parse_values(struct tsr_text_reader *r, struct tensor *t,
			size_t *n)
{
	size_t size = dtype_size(t->dtype);
	char *s = r->line, *w;
	int floaty = t->dtype == DT_F32 || t->dtype == DT_F64 ||
		     t->dtype == DT_F16 || t->dtype == DT_BF16;

	for (;;) {
		s = skip_blanks(s);
		if (*s == '"') {
			s++;
			if (parse_string(r, t, &s, n) < 0)
				return -1;
			if (*s && *s != ' ' && *s != '\t' && *s != '\r' &&
			    *s != '#')
				return fail(r, t, "want a blank after a string");
			continue;
		}
		if (!(w = word(&s)))
			return 0;
		if (reserve(r, t, *n) < 0)
			return -1;
		if ((floaty ? parse_float(w, (char *)t->data + *n * size,
					  t->dtype)
			    : parse_integer(w, (char *)t->data + *n * size,
					    t->dtype)) < 0)
			return fail(r, t, "value %zu: \"%s\" is not %s %s",
				    *n, w, t->dtype == DT_I8 ? "an" : "a",
				    dtype_name(t->dtype));
		++*n;
	}
}

static int is_record_line(const char *line)
{
	line = skip_blanks((char *)line);
	return strncmp(line, "record", 6) == 0 &&
	       (line[6] == ' ' || line[6] == '\t' || line[6] == 0);
}

int tsr_text_read(struct tsr_text_reader *r, struct tensor *t,
		  struct tsr_text_attr *a)
{
	size_t n = 0, numel;
	long line;
	int rc;

	memset(t, 0, sizeof *t);
	/* Up to the record line: the optional first line, blanks, comments. */
	for (;;) {
		char *s, *w;
		if ((rc = next_line(r)) <= 0)
			return rc;
		if (is_record_line(r->line))
			break;
		s = r->line;
		if (!(w = word(&s)))
			continue;
		if (!r->started && strcmp(w, "tsr-text") == 0) {
			w = word(&s);
			if (!w || strcmp(w, "1") != 0 || word(&s))
				return fail(r, NULL, "want \"%s\"",
					    TSR_TEXT_HEADER);
			r->started = 1;
			continue;
		}
		return fail(r, NULL, "values before the first record line");
	}
	r->started = 1;
	if (parse_record_line(r, t, a) < 0)
		return -1;
	numel = t->nbytes / dtype_size(t->dtype);
	line = r->lineno;
	while ((rc = next_line(r)) > 0) {
		if (is_record_line(r->line)) {
			r->have_line = 1;
			break;
		}
		if (parse_values(r, t, &n) < 0)
			goto fail;
	}
	if (rc < 0)
		goto fail;
	if (n != numel) {
		err_set("%s:%ld: record \"%s\": %zu values, but the shape "
			"holds %zu", r->label, line, t->name, n, numel);
		goto fail;
	}
	return 1;
fail:
	tensor_free(t);
	return -1;
}
