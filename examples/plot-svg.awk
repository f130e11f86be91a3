#!/usr/bin/awk -f
#
# plot-svg.awk: a line plot as SVG from a table of tab-separated columns,
# as length-experiment.sh writes it:
#
#   bucket  words  sentences  NAME1  NAME2 ...     (the header)
#   1       1-7    216        12.34  15.02         (one row per x position)
#   all     1-80   1076       20.10  22.00         (rows named "all": skipped)
#
# x is the row (a category, labelled with the second column and, below it,
# the third as n=...), y the value of each model's column; each model is a
# polyline with its own colour, dashes and markers, named in a legend.
#
#   awk -f plot-svg.awk [-v title=T] [-v xlabel=X] [-v ylabel=Y]
#       [-v width=W] [-v height=H] table.tsv > plot.svg
BEGIN {
	FS = "\t"
	if (width == "") width = 640
	if (height == "") height = 400
	ncolour = split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b " \
	    "#e377c2 #7f7f7f", colour, " ")
	ndash = split("none|6,3|2,3|8,3,2,3", dash, "|")
	nshape = split("circle square triangle diamond cross", shape, " ")
}

# The text s, safe in SVG text and attributes.
function xml(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	return s
}

function marker(k, x, y, c,    r) {
	r = 4
	k = shape[(k - 1) % nshape + 1]
	if (k == "circle")
		printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n", x, y, r, c
	else if (k == "square")
		printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", x - r, y - r, 2 * r, 2 * r, c
	else if (k == "triangle")
		printf "<path d=\"M%.1f,%.1fl%d,%dh%dz\" fill=\"%s\"/>\n", x, y - r - 1, r + 1, 2 * r + 1, -2 * r - 2, c
	else if (k == "diamond")
		printf "<path d=\"M%.1f,%.1fl%d,%dl%d,%dl%d,%dz\" fill=\"%s\"/>\n", x, y - r - 1, r + 1, r + 1, -r - 1, r + 1, -r - 1, -r - 1, c
	else
		printf "<path d=\"M%.1f,%.1fl%d,%dm0,%dl%d,%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", x - r, y - r, 2 * r, 2 * r, -2 * r, -2 * r, 2 * r, c
}

NR == 1 {
	nm = NF - 3
	for (i = 4; i <= NF; i++)
		name[i - 3] = $i
	next
}
$1 == "all" { next }
{
	if (NF != nm + 3) {
		printf "plot-svg.awk: line %d: %d columns, not %d\n", NR, NF,
		    nm + 3 > "/dev/stderr"
		failed = 1
		exit 1
	}
	nx++
	label[nx] = $2
	count[nx] = $3
	for (i = 1; i <= nm; i++) {
		y[nx, i] = $(i + 3) + 0
		if (y[nx, i] > ymax) ymax = y[nx, i]
	}
}

END {
	if (failed)
		exit 1
	if (nx == 0 || nm < 1) {
		print "plot-svg.awk: no rows or no models to plot" > "/dev/stderr"
		exit 1
	}
	# A round step giving at most 6 ticks, and the axis up to a tick.
	if (ymax <= 0) ymax = 1
	nstep = split("0.1 0.2 0.5 1 2 5 10 20 50 100", steps, " ")
	for (k = 1; k < nstep && ymax / steps[k] > 6; k++)
		;
	step = steps[k]
	top = step * int(ymax / step + 0.999999)
	longest = 0
	for (i = 1; i <= nm; i++)
		if (length(name[i]) > longest) longest = length(name[i])

	ml = 64; mt = title != "" ? 44 : 20; mb = 64
	mr = 24 + 40 + 7 * longest
	pw = width - ml - mr; ph = height - mt - mb
	if (pw < 40 * nx) { pw = 40 * nx; width = ml + pw + mr }

	printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" " \
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" " \
	    "font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\">\n",
	    width, height, width, height
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
	if (title != "")
		printf "<text x=\"%d\" y=\"24\" font-size=\"15\" " \
		    "text-anchor=\"middle\">%s</text>\n", ml + pw / 2, xml(title)

	# The y axis: grid lines, ticks and values.
	printf "<g id=\"yaxis\" text-anchor=\"end\">\n"
	for (v = 0; v <= top + step / 2; v += step) {
		py = mt + ph - ph * v / top
		printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" " \
		    "stroke=\"#dddddd\"/>", ml, py, ml + pw, py
		printf "<text x=\"%d\" y=\"%.1f\">%s</text>\n", ml - 6, py + 4,
		    (step < 1 ? sprintf("%.1f", v) : sprintf("%d", v + 0.5))
	}
	printf "</g>\n"
	printf "<text transform=\"translate(%d,%d) rotate(-90)\" " \
	    "text-anchor=\"middle\">%s</text>\n", 18, mt + ph / 2, xml(ylabel)

	# The x axis: one category per row.
	printf "<g id=\"xaxis\" text-anchor=\"middle\">\n"
	for (j = 1; j <= nx; j++) {
		px[j] = ml + pw * (j - 0.5) / nx
		printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" " \
		    "stroke=\"#000000\"/>", px[j], mt + ph, px[j], mt + ph + 5
		printf "<text x=\"%.1f\" y=\"%d\">%s</text>", px[j], mt + ph + 18,
		    xml(label[j])
		printf "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" " \
		    "fill=\"#666666\">n=%s</text>\n", px[j], mt + ph + 31,
		    xml(count[j])
	}
	printf "</g>\n"
	printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
	    ml + pw / 2, mt + ph + 54, xml(xlabel)
	printf "<path d=\"M%d,%dV%dH%d\" fill=\"none\" stroke=\"#000000\"/>\n",
	    ml, mt, mt + ph, ml + pw

	# The models: a polyline and its markers each, and the legend.
	for (i = 1; i <= nm; i++) {
		c = colour[(i - 1) % ncolour + 1]
		d = dash[(i - 1) % ndash + 1]
		printf "<g id=\"model%d\">\n<polyline fill=\"none\" " \
		    "stroke=\"%s\" stroke-width=\"2\"%s points=\"", i, c,
		    (d == "none" ? "" : " stroke-dasharray=\"" d "\"")
		for (j = 1; j <= nx; j++)
			printf "%s%.1f,%.1f", (j > 1 ? " " : ""), px[j],
			    mt + ph - ph * y[j, i] / top
		printf "\"/>\n"
		for (j = 1; j <= nx; j++)
			marker(i, px[j], mt + ph - ph * y[j, i] / top, c)
		ly = mt + 10 + 20 * (i - 1)
		lx = ml + pw + 20
		printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" " \
		    "stroke=\"%s\" stroke-width=\"2\"%s/>\n", lx, ly, lx + 28,
		    ly, c, (d == "none" ? "" : " stroke-dasharray=\"" d "\"")
		marker(i, lx + 14, ly, c)
		printf "<text x=\"%d\" y=\"%d\">%s</text>\n</g>\n", lx + 36,
		    ly + 4, xml(name[i])
	}
	printf "</svg>\n"
}
