#!/bin/sh
# strongs-gold.sh: a gold word alignment of the Bible dev set (Spanish to
# English) from the Strong's numbers that the RV1909 and the KJV carry.
#
# usage: tools/strongs-gold.sh DATA WORK
#
# DATA holds dev.ref, dev.es and dev.en (one line each per dev line; a
# line of several verses has their ids joined by '+').  Writes into WORK
# (made if need be):
#
#	dev.sure, dev.possible	Pharaoh, line for line with dev.es/dev.en:
#				"i-j", i a word of dev.es, j of dev.en, from 0
#	dev.tagged		the words of dev.en, from 0, that carry a
#				number (the only ones a link can reach;
#				aer.sh -t)
#	es.osis.BOOK, en.osis.BOOK	what diatheke gave, one dev book each
#
# and a count of what could not be mapped on stderr.  Needs diatheke and
# the modules of Debian's sword-text-sparv and sword-text-kjv.
#
# Only the dev books are ever read from the modules, one book per query
# (the others hold held-out text): a dev.ref naming another book is refused
# before any query.
#
# The modules tag words with <w lemma="strong:H1234 ...">: in the RV1909 a
# tag often spans a phrase ("en los días" for H3117, days), in the KJV
# mostly one word.  A word carries the numbers of the tags it is in; the
# last word of a tag is its head.  A Spanish word and an English word that
# share a number are a possible link, and a sure one when both are heads
# of the only heads of that number in the line ("días-days" sure,
# "en-days" and "los-days" possible).
#
# Module words are mapped to the corpus's space-separated words (the
# corpus was made from other renderings: case and punctuation differ) by
# normalising both (lower case, letters and digits only; words of
# punctuation alone are dropped), taking the longest common subsequence,
# and then mapping by position the words of any gap between two matches
# that has as many words on both sides.  Module words left unmapped lose
# their links; their count is reported.
set -eu

BOOKS="Ruth Esth Eccl Amos Jonah Gal Eph 1Pet"
[ $# -eq 2 ] || { echo "usage: $0 DATA WORK" >&2; exit 2; }
data=$1 work=$2
for f in dev.ref dev.es dev.en; do
	[ -r "$data/$f" ] || { echo "$0: $data/$f: cannot read" >&2; exit 1; }
done
command -v diatheke > /dev/null ||
	{ echo "$0: diatheke not found (apt-get install diatheke)" >&2; exit 1; }
export LC_ALL=C.UTF-8

# Every verse id of dev.ref in a dev book, before anything is read.
tr '+' '\n' < "$data/dev.ref" | awk -v books="$BOOKS" '
	BEGIN { n = split(books, b, " "); for (i = 1; i <= n; i++) ok[b[i]] = 1 }
	{ split($0, p, ".")
	  if (!(p[1] in ok) || $0 !~ /^[1-3A-Za-z]+\.[0-9]+\.[0-9]+$/) {
		printf "'"$0"': dev.ref line %d: \"%s\" is not a verse of a dev book\n",
		       NR, $0 > "/dev/stderr"; exit 1 } }'

mkdir -p "$work"

# The words of every dev verse of one module: ref, word, numbers, head.
words() {	# module, lang
	for b in $BOOKS; do
		diatheke -b "$1" -o n -f OSIS -k "$b" > "$work/$2.osis.$b"
		awk -v book="$b" -v lang="$2" -f /dev/fd/3 "$work/$2.osis.$b" 3<<'EOF'
function num(s,   n, i, a, out) {	# "strong:H0776 G12" -> "H776,G12"
	gsub(/strong:/, "", s)
	n = split(s, a, " ")
	out = ""
	for (i = 1; i <= n; i++)
		if (a[i] ~ /^[GH][0-9]+$/)
			out = out (out == "" ? "" : ",") substr(a[i], 1, 1) \
			      (substr(a[i], 2) + 0)
	return out
}
function verse(   s, tag, lem, n, tok, k, t, i, c, j, open, spantext,
		  nw, w, nu, hd) {
	s = text
	while (match(s, /<w [^>]*>/)) {
		tag = substr(s, RSTART, RLENGTH)
		lem = tag
		if (!sub(/.*lemma="/, "", lem))
			lem = ""
		sub(/".*/, "", lem)
		s = substr(s, 1, RSTART - 1) "\001" num(lem) "\002" \
		    substr(s, RSTART + RLENGTH)
	}
	gsub(/<\/w>/, "\003", s)
	gsub(/<[^>]*>/, " ", s)
	n = split(s, tok, /[ \t]+/)
	open = ""; nw = 0
	for (k = 1; k <= n; k++) {
		t = tok[k]
		if (t == "")
			continue
		nw++; w[nw] = ""; nu[nw] = ""; hd[nw] = 0; spantext = 0
		for (i = 1; i <= length(t); i++) {
			c = substr(t, i, 1)
			if (c == "\001") {
				j = index(substr(t, i), "\002")
				open = substr(t, i + 1, j - 2)
				spantext = 0
				i += j - 1
			} else if (c == "\003") {
				if (spantext)
					hd[nw] = 1
				else if (nw > 1 && open != "")
					hd[nw - 1] = 1
				open = ""
			} else {
				w[nw] = w[nw] c
				if (open != "") {
					spantext = 1
					if (index("," nu[nw] ",", "," open ",") == 0)
						nu[nw] = nu[nw] (nu[nw] == "" ? "" : ",") open
				}
			}
		}
	}
	for (k = 1; k <= nw; k++)
		if (w[k] != "")
			printf "%s\t%s\t%s\t%d\n", ref, w[k], nu[k], hd[k]
}
/^\([^)]*\)$/ { next }			# the module's name
match($0, /^[^:<]* [0-9]+:[0-9]+: /) {
	len = RLENGTH			# before verse()'s own matches
	if (ref != "")
		verse()
	head = substr($0, 1, len - 2)
	n = split(head, hp, " ")
	split(hp[n], cv, ":")
	# the RV1909 numbers Jonah 2 as the Hebrew does: its 2:1 is the
	# KJV's 1:17 (its 1:17 is empty), its 2:10 the KJV's 2:9 and 2:10
	if (lang == "es" && book == "Jonah" && cv[1] == 2)
		ref = cv[2] == 1 ? "Jonah.1.17" : "Jonah.2." (cv[2] - 1)
	else
		ref = book "." cv[1] "." cv[2]
	text = substr($0, len + 1)
	next
}
{ text = text " " $0 }
END { if (ref != "") verse() }
EOF
	done
}

# Normalised words (lower case, letters and digits), a column added: the
# file's words are in column col.
norm() {	# col
	awk -F '\t' -v col="$1" '{ print $col }' |
		sed 's/.*/\L&/; s/[^[:alnum:]]//g'
}

# One line per dev line: for each corpus word, "numbers/head" or "-".
map() {	# lang
	words "$2" "$1" > "$work/$1.words"
	norm 2 < "$work/$1.words" | paste "$work/$1.words" - > "$work/$1.wn"
	tr -s ' \t' '\n\n' < "$data/dev.$1" | norm 1 > "$work/$1.cn"
	awk -v ref="$data/dev.ref" -v corpus="$data/dev.$1" \
	    -v cn="$work/$1.cn" -v lang="$1" -f /dev/fd/3 "$work/$1.wn" \
	    > "$work/$1.map" 3<<'EOF'
# module words by verse
{ k = ++nv[$1]; mw[$1, k] = $5; mn[$1, k] = $3; mh[$1, k] = $4 }
END {
	unmapped = lost = bypos = words = 0
	while ((getline line < ref) > 0) {
		L++
		# module side: the words of the line's verses, punctuation dropped
		M = 0
		nr = split(line, r, "+")
		for (q = 1; q <= nr; q++) {
			if (!(r[q] in nv))
				missing++
			for (k = 1; k <= nv[r[q]]; k++)
				if (mw[r[q], k] != "") {
					M++; a[M] = mw[r[q], k]
					an[M] = mn[r[q], k]; ah[M] = mh[r[q], k]
				}
		}
		# corpus side: its words, normalised
		getline cl < corpus
		N = split(cl, cw, /[ \t]+/)
		if (N > 0 && cw[1] == "") { for (i = 1; i < N; i++) cw[i] = cw[i+1]; N-- }
		if (N > 0 && cw[N] == "") N--
		for (j = 1; j <= N; j++)
			getline b[j] < cn
		# the longest common subsequence of a[1..M] and b[1..N]
		for (i = M + 1; i >= 1; i--)
			for (j = N + 1; j >= 1; j--)
				if (i > M || j > N) d[i, j] = 0
				else if (a[i] == b[j]) d[i, j] = d[i+1, j+1] + 1
				else d[i, j] = d[i+1, j] > d[i, j+1] ? d[i+1, j] : d[i, j+1]
		for (j = 1; j <= N; j++) to[j] = 0
		i = j = 1; pi = pj = 0
		while (i <= M + 1 || j <= N + 1) {
			match_here = i <= M && j <= N && a[i] == b[j]
			if (match_here || i > M && j > N) {
				# a gap of as many words on both sides: by position
				if (i - pi == j - pj)
					for (g = 1; pi + g < i; g++) {
						to[pj + g] = pi + g; bypos++
					}
				if (!match_here)
					break
				to[j] = i; pi = i; pj = j; i++; j++
			} else if (i <= M && (j > N || d[i+1, j] >= d[i, j+1]))
				i++
			else
				j++
		}
		for (i = 1; i <= M; i++) used[i] = 0
		out = ""
		for (j = 1; j <= N; j++) {
			i = to[j]
			if (i) used[i] = 1
			out = out (j > 1 ? " " : "") \
			      (i && an[i] != "" ? an[i] "/" ah[i] : "-")
		}
		bad = 0
		for (i = 1; i <= M; i++) {
			words++
			if (!used[i] && an[i] != "") { lost++; bad = 1 }
		}
		unmapped += bad
		print out
	}
	printf "%s: %d module words, %d mapped by position, %d tagged ones " \
	       "unmapped, in %d of %d lines; %d verses of dev.ref missing\n",
	       lang, words, bypos, lost, unmapped, L, missing > "/dev/stderr"
}
EOF
}

map es spaRV1909eb
map en engKJV2006eb

# The links (tools/strongs-links.awk says which are sure).
paste -d '\t' "$work/es.map" "$work/en.map" | awk -F '\t' \
    -v sure="$work/dev.sure" -v poss="$work/dev.possible" \
    -v tagged="$work/dev.tagged" -f "$(dirname "$0")/strongs-links.awk"
