/*
 * svg_heatmap.c: an attention matrix as an SVG heat map; see svg.h.
 *
 * Sizes are in pixels.  SVG cannot measure text, so the margins that hold
 * the labels are estimated from their number of characters at CHAR_W, a
 * little more than a sans-serif font's average width at FONT.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "base/errmsg.h"
#include "svg.h"
#include "base/utf8.h"

enum {
	FONT = 12,              /* label size */
	CHAR_W = 7,             /* estimated width of a character */
	CELL = 20,              /* side of a cell */
	MARGIN = 10,            /* around everything */
	GAP = 5,                /* between a label and the grid */
	TITLE_H = 22,           /* the title's line */
	LEGEND_GAP = 16,        /* between the grid and the legend */
	LEGEND_W = 14,
	LEGEND_MIN_H = 60, LEGEND_MAX_H = 200,
	MAX_CELLS = 1 << 24,    /* a picture nobody could look at */
};

/* The characters of one label, escaped; out NULL only counts them. */
int svg_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	int shown = 0;

	while (left) {
		uint32_t cp;
		int len = utf8_decode(p, left, &cp);
		const char *entity = NULL;

		if (len == 0) {                 /* an invalid byte */
			len = 1;
			cp = 0xfffd;
		} else if (cp < 0x20 || cp == 0x7f ||
			   (cp >= 0x80 && cp < 0xa0) ||
			   cp == 0xfffe || cp == 0xffff) {
			cp = 0xfffd;
		}
		switch (cp) {
		case '&': entity = "&amp;"; break;
		case '<': entity = "&lt;"; break;
		case '>': entity = "&gt;"; break;
		case '"': entity = "&quot;"; break;
		case '\'': entity = "&apos;"; break;
		}
		if (out && entity)
			fputs(entity, out);
		else if (out && cp == 0xfffd)
			fputs("\xef\xbf\xbd", out);
		else if (out)
			fwrite(p, 1, len, out);
		p += len;
		left -= len;
		shown++;
	}
	return out && ferror(out) ? -1 : shown;
}

/* The label of index i, as text or as the index. */
static void put_label(FILE *out, const char *const *label, int i)
{
	if (label && label[i])
		svg_text(out, label[i]);
	else
		fprintf(out, "%d", i);
}

/* The widest of n labels, in characters. */
static int widest(const char *const *label, int n)
{
	int most = 1;

	for (int i = 0; i < n; i++) {
		char num[16];
		int k = label && label[i] ? svg_text(NULL, label[i])
					  : snprintf(num, sizeof num, "%d", i);
		most = k > most ? k : most;
	}
	return most;
}

/* The fill of weight w: a grey from white (0) to black (1), NaN red. */
static void fill(char out[8], float w)
{
	long g;

	if (isnan(w)) {
		strcpy(out, "#ff0000");
		return;
	}
	w = w < 0 ? 0 : w > 1 ? 1 : w;
	g = lroundf(255 * (1 - w));
	snprintf(out, 8, "#%02lx%02lx%02lx", g, g, g);
}

/* The legend: a bar from white (0, bottom) to black (top), ticked. */
static void legend(FILE *out, int x, int y, int h, float top)
{

	fprintf(out, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" "
		"x2=\"0\" y2=\"0\"><stop offset=\"0\" stop-color=\"#ffffff\"/>"
		"<stop offset=\"1\" stop-color=\"#000000\"/></linearGradient>"
		"</defs>\n");
	fprintf(out, "<g id=\"legend\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\" fill=\"url(#scale)\" stroke=\"#888888\"/>\n",
		x, y, LEGEND_W, h);
	for (int k = 0; k < 5; k++) {
		int ty = y + h - k * h / 4;
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"#000000\"/>", x + LEGEND_W, ty,
			x + LEGEND_W + 4, ty);
		fprintf(out, "<text x=\"%d\" y=\"%d\">%.3g</text>\n",
			x + LEGEND_W + 6, ty + FONT / 3, top * k / 4);
	}
	fputs("</g>\n", out);
}

/* Black's weight: 1, or the largest finite weight where one passes 1. */
static float scale_top(const struct svg_heatmap *h)
{
	float top = 1;

	for (size_t i = 0; i < (size_t)h->rows * h->cols; i++)
		if (isfinite(h->w[i]) && h->w[i] > top)
			top = h->w[i];
	return top;
}

int svg_heatmap(FILE *out, const struct svg_heatmap *h)
{
	int title_h, left, top, grid_w, grid_h, legend_h, legend_x;
	int width, height;
	float black;

	if (h->rows < 1 || h->cols < 1 ||
	    (long long)h->rows * h->cols > MAX_CELLS) {
		err_set("heat map of %d x %d cells: not a picture", h->rows,
			h->cols);
		return -1;
	}
	black = scale_top(h);
	title_h = h->title ? TITLE_H : 0;
	left = MARGIN + widest(h->row_label, h->rows) * CHAR_W + GAP;
	top = MARGIN + title_h + widest(h->col_label, h->cols) * CHAR_W + GAP;
	grid_w = h->cols * CELL;
	grid_h = h->rows * CELL;
	legend_h = grid_h < LEGEND_MIN_H ? LEGEND_MIN_H
		 : grid_h > LEGEND_MAX_H ? LEGEND_MAX_H : grid_h;
	legend_x = left + grid_w + LEGEND_GAP;
	width = legend_x + LEGEND_W + 6 + 4 * CHAR_W + MARGIN;
	if (h->title && 2 * MARGIN + svg_text(NULL, h->title) * CHAR_W > width)
		width = 2 * MARGIN + svg_text(NULL, h->title) * CHAR_W;
	height = top + (grid_h > legend_h ? grid_h : legend_h) + MARGIN;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"DejaVu Sans, sans-serif\" font-size=\"%d\">\n",
		width, height, width, height, FONT);
	if (h->title) {
		fputs("<title>", out);
		svg_text(out, h->title);
		fputs("</title>\n", out);
	}
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" "
		"fill=\"#ffffff\"/>\n");
	if (h->title) {
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"%d\">",
			MARGIN, MARGIN + FONT + 2, FONT + 2);
		svg_text(out, h->title);
		fputs("</text>\n", out);
	}

	/* The columns' labels read upwards from just above their column. */
	fputs("<g id=\"cols\">\n", out);
	for (int j = 0; j < h->cols; j++) {
		fprintf(out, "<text transform=\"translate(%d,%d) rotate(-90)\">",
			left + j * CELL + CELL / 2 + FONT / 3, top - GAP);
		put_label(out, h->col_label, j);
		fputs("</text>\n", out);
	}
	fputs("</g>\n<g id=\"rows\" text-anchor=\"end\">\n", out);
	for (int i = 0; i < h->rows; i++) {
		fprintf(out, "<text x=\"%d\" y=\"%d\">", left - GAP,
			top + i * CELL + CELL / 2 + FONT / 3);
		put_label(out, h->row_label, i);
		fputs("</text>\n", out);
	}
	fputs("</g>\n<g id=\"cells\">\n", out);
	for (int i = 0; i < h->rows; i++)
		for (int j = 0; j < h->cols; j++) {
			char grey[8];
			fill(grey, h->w[(size_t)i * h->cols + j] / black);
			fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
				"height=\"%d\" fill=\"%s\"/>\n",
				left + j * CELL, top + i * CELL, CELL, CELL,
				grey);
		}
	fprintf(out, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\" fill=\"none\" stroke=\"#888888\"/>\n",
		left, top, grid_w, grid_h);
	legend(out, legend_x, top, legend_h, black);
	fputs("</svg>\n", out);
	if (ferror(out)) {
		err_set("writing the picture: write error");
		return -1;
	}
	return 0;
}
