/*
 * svg.h: pictures for people, as SVG text: the heat map of an attention
 * matrix, drawn as Bahdanau, Cho and Bengio (2014) draw theirs in Figure 3
 * (source words along the top, target words down the left side, a grey
 * scale from white for 0 to black for 1, or for the largest weight).
 *
 * The text is plain SVG 1.1 that browsers and rsvg-convert show: a white
 * background, the labels in a sans-serif font, the column labels turned a
 * quarter to read upwards, one <rect> per cell inside <g id="cells"> (one
 * line each, row by row), and a legend bar with the scale.
 */
#ifndef ATTN_SVG_H
#define ATTN_SVG_H

#include <stdio.h>

struct svg_heatmap {
	const float *w;         /* [rows, cols], row-major */
	int rows, cols;         /* >= 1 each */
	/* UTF-8 labels, rows and cols of them; NULL (the array or one
	 * label): the index, from 0. */
	const char *const *row_label;
	const char *const *col_label;
	const char *title;      /* a line above the picture, or NULL */
};

/*
 * Writes the picture.  A cell's grey is round(255 (1 - w / top)) in each of
 * red, green and blue, with w / top clamped to [0, 1], where top is 1 or,
 * when a finite weight passes 1 (weights that are not a softmax's, as
 * Graves' window's), the largest; the legend's ticks go from 0 to top.  A
 * NaN cell is red, so that it cannot pass for a weight.  Returns 0, or -1 (err_msg()) on bad sizes or
 * a write error.
 */
int svg_heatmap(FILE *out, const struct svg_heatmap *h);

/*
 * Writes s as XML character data, safe in an element or in an attribute
 * in double or single quotes: & < > " ' as entities, valid UTF-8 as it
 * is, and an invalid byte, a control character or a character that XML
 * does not allow (U+FFFE, U+FFFF) as U+FFFD.  Returns the number of
 * characters shown (for the width of the text), or -1 on a write error;
 * with out NULL, only counts them.
 */
int svg_text(FILE *out, const char *s);

#endif
