# markup.awk: inline markup through a translation, in two passes around
# it (examples/translate-markup.sh runs them).
#
#   awk -v mode=strip -v tags=TAGS -f markup.awk < marked > plain
#   awk -v mode=project -v tags=TAGS -f markup.awk < translated > marked
#
# strip: each line's tags out, its words joined by single spaces (the
# words of align(1) and score -A), and a line of TAGS saying where each
# tag stood: the line's word count, then one tab-separated item a tag,
# in order, "KIND BOUNDARY TAG", KIND o (opening), c (closing) or v (a
# tag that stands alone: <br>, <br/>, a comment), BOUNDARY the number of
# words before it.  A tag inside a word takes the whole word in: an
# opening one stands before the word, a closing one after it.
#
# project: reads lines "TEXT ||| ALIGNMENT" (beam -A) and TAGS, line for
# line, and puts the tags into TEXT.  Each element is the set of source
# words it encloses; each word of TEXT is put in the elements of the
# source word it is linked to (of several, the one in the most elements,
# the leftmost of those), and a word without a link in those that its
# linked neighbours share (at the line's ends, those of its one linked
# neighbour).  Elements nest as in the source, so the output's do; an
# element whose words are split by others is split into several ("<b>x
# </b>y<b> z</b>"), and one that no word of TEXT is put in, and every
# tag that stands alone, is written where the first linked source word
# at or after it went (at the end if none) as it was: "<b></b>".  No
# tag is ever dropped.
#
# A tag is "<", a letter (after "/" for a closing one), "!" or "?", then
# anything but "<" and ">", then ">"; a "<" of the text must be written
# "&lt;", as in HTML.  Void elements (br, hr, img, input, wbr, ...) and
# tags ending "/>" stand alone.  The elements of a line close on it, in
# order: anything else is refused with its line and exit 1.

function fail(msg)
{
	printf "markup.awk: line %d: %s\n", NR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

# The name of tag t, lower-cased ("" for <!...> and <?...>).
function tag_name(t,    s)
{
	s = substr(t, 2)
	sub(/^\//, "", s)
	if (s !~ /^[A-Za-z]/)
		return ""
	match(s, /^[A-Za-z0-9:_-]+/)
	return tolower(substr(s, 1, RLENGTH))
}

function tag_kind(t,    n)
{
	n = tag_name(t)
	if (n == "" || t ~ /\/>$/ || n in void)
		return "v"
	return substr(t, 2, 1) == "/" ? "c" : "o"
}

# The words of text (split at spaces) into w[1..n], and the spaces before
# word j into gap[j - 1] (gap[n]: after the last); n.
function words(text, w, gap,    n)
{
	n = 0
	while (match(text, /[^ ]+/)) {
		gap[n] = substr(text, 1, RSTART - 1)
		w[++n] = substr(text, RSTART, RLENGTH)
		text = substr(text, RSTART + RLENGTH)
	}
	gap[n] = text
	return n
}

function strip(line,    rest, text, ntag, k, at, tk, tt, kind, t, depth,
	       open, nw, wd, gap, st, en, i, p, out, rec, pos)
{
	gsub(/\t/, " ", line)
	rest = line
	text = ""
	ntag = depth = 0
	while (match(rest, /<(\/?[A-Za-z]|[!?])[^<>]*>/)) {
		text = text substr(rest, 1, RSTART - 1)
		t = substr(rest, RSTART, RLENGTH)
		rest = substr(rest, RSTART + RLENGTH)
		kind = tag_kind(t)
		if (kind == "o")
			open[++depth] = tag_name(t)
		else if (kind == "c") {
			if (depth == 0)
				fail(t " closes no element")
			if (open[depth] != tag_name(t))
				fail(t " closes <" open[depth] ">")
			depth--
		}
		ntag++
		at[ntag] = length(text)
		tk[ntag] = kind
		tt[ntag] = t
	}
	text = text rest
	if (depth > 0)
		fail("<" open[depth] "> is not closed on its line")

	# the words' spans in text: st[w] chars before it, en[w] after it
	nw = words(text, wd, gap)
	out = ""
	pos = 0
	for (i = 1; i <= nw; i++) {
		st[i] = pos + length(gap[i - 1])
		en[i] = pos = st[i] + length(wd[i])
		out = out (i > 1 ? " " : "") wd[i]
	}
	rec = nw
	for (k = 1; k <= ntag; k++) {
		p = at[k]
		i = 0
		if (tk[k] == "c")	# the words begun before it
			while (i < nw && st[i + 1] < p)
				i++
		else			# the words ended before it
			while (i < nw && en[i + 1] <= p)
				i++
		rec = rec "\t" tk[k] " " i " " tt[k]
	}
	print out
	print rec > tags
}

# The common prefix of stacks a and b ("e1 e4 " lists): its length.
function common(a, b,    n, m, x, y, k)
{
	n = split(a, x, " ")
	m = split(b, y, " ")
	for (k = 1; k <= n && k <= m && x[k] == y[k]; k++)
		;
	return k - 1
}

# Element e as it was, empty, with its elements inside it.
function empty(e, ne,    s, k)
{
	s = e_tag[e]
	for (k = e + 1; k <= ne; k++)
		if (e_par[k] == e)
			s = s empty(k, ne)
	return s e_close[e]
}

# The number of elements of stack a less that of stack b.
function deeper(a, b,    x)
{
	return split(a, x, " ") - split(b, x, " ")
}

# The first linked source word at or after boundary a: where it went in
# the target (TW if none).
function anchor(a, SW, TW,    i)
{
	for (i = a; i < SW; i++)
		if (i in first)
			return first[i]
	return TW
}

function project(line,    rec, sep, text, al, ni, item, k, SW, TW, tw, gap, np,
		 pr, ij, i, j, e, ne, depth, parent, stk, s, ts, best, prev,
		 next_, stuck, out, cur, n, x, c, m, used, kind, bnd)
{
	if ((getline rec < tags) <= 0)
		fail("no line of " tags " for it")
	# the last " ||| " (the text might hold one, the alignment cannot)
	for (sep = 0; (k = index(substr(line, sep + 1), " ||| ")) > 0; )
		sep += k
	if (!sep)
		fail("no \" ||| \": not the output of beam -A")
	text = substr(line, 1, sep - 1)
	al = substr(line, sep + 5)
	ni = split(rec, item, "\t")
	SW = item[1] + 0
	TW = words(text, tw, gap)	# the spaces kept as they were

	# the elements: start and end boundaries, tag; stk[i] of source word i
	ne = depth = 0
	split("", stk)
	split("", lone)
	for (k = 2; k <= ni; k++) {
		kind = substr(item[k], 1, 1)
		s = substr(item[k], 3)
		bnd = substr(s, 1, index(s, " ") - 1) + 0
		s = substr(s, index(s, " ") + 1)
		if (kind == "o") {
			ne++
			e_tag[ne] = s
			e_a[ne] = bnd
			e_item[ne] = k
			e_par[ne] = depth ? parent[depth] : 0
			parent[++depth] = ne
		} else if (kind == "c") {
			e = parent[depth--]
			e_b[e] = bnd
			e_close[e] = s
		} else {
			lone[k] = s
			lone_at[k] = bnd
		}
	}
	for (i = 0; i < SW; i++)
		stk[i] = ""
	for (e = 1; e <= ne; e++)
		for (i = e_a[e]; i < e_b[e]; i++)
			stk[i] = stk[i] e " "

	# the links: for each target word the source word whose elements it
	# takes; first[i], the first target word linked to source word i
	split("", first)
	split("", ts)
	split("", used)
	np = split(al, pr, " ")
	for (k = 1; k <= np; k++) {
		if (split(pr[k], ij, "-") != 2 || ij[1] !~ /^[0-9]+$/ ||
		    ij[2] !~ /^[0-9]+$/ || ij[1] + 0 >= SW || ij[2] + 0 >= TW)
			fail("\"" pr[k] "\" is not a link of its " SW \
			     " source words and " TW " target words")
		i = ij[1] + 0
		j = ij[2] + 0
		if (!(i in first) || j < first[i])
			first[i] = j
		if (!(j in best) || deeper(stk[i], stk[best[j]]) > 0 ||
		    (deeper(stk[i], stk[best[j]]) == 0 && i < best[j]))
			best[j] = i
	}
	for (j = 0; j < TW; j++)
		if (j in best)
			ts[j] = stk[best[j]]
	prev = -1
	for (j = 0; j < TW; j++) {
		if (j in best) {
			prev = j
			continue
		}
		for (next_ = j + 1; next_ < TW && !(next_ in best); next_++)
			;
		if (prev < 0 && next_ >= TW)
			ts[j] = ""
		else if (prev < 0)
			ts[j] = ts[next_]
		else if (next_ >= TW)
			ts[j] = ts[prev]
		else {
			n = common(ts[prev], ts[next_])
			split(ts[prev], x, " ")
			ts[j] = ""
			for (c = 1; c <= n; c++)
				ts[j] = ts[j] x[c] " "
		}
	}
	for (j = 0; j < TW; j++) {
		n = split(ts[j], x, " ")
		for (c = 1; c <= n; c++)
			used[x[c]] = 1
	}
	for (e = 1; e <= ne; e++)
		if (!(e in used) && (e_par[e] == 0 || e_par[e] in used)) {
			lone[e_item[e]] = empty(e, ne)
			lone_at[e_item[e]] = e_a[e]
		}

	# the text, element by element; what stands alone (lone, by the
	# index of its item) before the word its anchor names, in the
	# source's order
	for (k = 2; k <= ni; k++)
		if (k in lone)
			stuck[k] = anchor(lone_at[k], SW, TW)
	out = ""
	cur = ""
	for (j = 0; j <= TW; j++) {
		s = j < TW ? ts[j] : ""
		c = common(cur, s)
		n = split(cur, x, " ")
		for (k = n; k > c; k--)
			out = out e_close[x[k]]
		if (j < TW)
			out = out gap[j]
		for (k = 2; k <= ni; k++)
			if (k in lone && stuck[k] == j)
				out = out lone[k]
		n = split(s, x, " ")
		for (k = c + 1; k <= n; k++)
			out = out e_tag[x[k]]
		if (j < TW)
			out = out tw[j + 1]
		cur = s
	}
	print out gap[TW]
}

BEGIN {
	if (mode != "strip" && mode != "project" || tags == "") {
		print "usage: awk -v mode=strip|project -v tags=FILE " \
		      "-f markup.awk" > "/dev/stderr"
		failed = 1
		exit 2
	}
	nv = split("area base br col embed hr img input link meta param " \
		   "source track wbr", names, " ")
	while (nv > 0)
		void[names[nv--]] = 1
}

mode == "strip" { strip($0) }
mode == "project" { project($0) }

END {
	if (!failed && mode == "project" && (getline extra < tags) > 0) {
		printf "markup.awk: %s has more lines than the input\n",
		       tags > "/dev/stderr"
		exit 1
	}
}
