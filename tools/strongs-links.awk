# strongs-links.awk: the links of strongs-gold.sh's gold, from the words'
# Strong's numbers (tools/strongs-gold.sh makes its input; the tests give
# it lines of their own).
#
# usage: awk -F '\t' -v sure=FILE -v poss=FILE -v tagged=FILE \
#            -f tools/strongs-links.awk MAPS
#
# Each line of MAPS is a Spanish line's words, a tab, the English line's:
# each word "-" (no number) or "NUMBERS/HEAD", NUMBERS comma-separated
# ("H3117,H853"), HEAD 1 when the word is the last of its tag.  Writes a
# line to each file per line read, word numbers from 0:
#
#	poss	"i-j" for every Spanish word i and English word j that share
#		a number (the sure links included)
#	sure	those of them where both words are heads and no other word
#		of the line heads that number: where it heads two on a side
#		("juzgaban los jueces", "the judges ruled", all four H8199),
#		the tags do not say which goes with which, so those links
#		are only possible
#	tagged	the English words that carry a number
#
# and the counts on stderr.

function heads(w, n, count,   j, p, m, num, k) {
	for (j = 1; j <= n; j++) {
		if (w[j] == "-") continue
		split(w[j], p, "/")
		if (!p[2]) continue
		m = split(p[1], num, ",")
		for (k = 1; k <= m; k++)
			count[num[k]]++
	}
}
{
	ns = split($1, s, " "); ne = split($2, e, " ")
	S = P = T = ""
	for (j = 1; j <= ne; j++)
		if (e[j] != "-") {
			T = T (T == "" ? "" : " ") (j-1); tt++
		}
	# how many heads carry each number, on each side of the line
	split("", hs); split("", he)
	heads(s, ns, hs); heads(e, ne, he)
	for (i = 1; i <= ns; i++) {
		if (s[i] == "-") continue
		split(s[i], sp, "/"); nsn = split(sp[1], sn, ",")
		for (j = 1; j <= ne; j++) {
			if (e[j] == "-") continue
			split(e[j], ep, "/")
			shared = is_sure = 0
			for (k = 1; k <= nsn; k++)
				if (index("," ep[1] ",", "," sn[k] ",")) {
					shared = 1
					if (sp[2] && ep[2] && hs[sn[k]] == 1 &&
					    he[sn[k]] == 1)
						is_sure = 1
				}
			if (shared)
				P = P (P == "" ? "" : " ") (i-1) "-" (j-1)
			if (is_sure)
				S = S (S == "" ? "" : " ") (i-1) "-" (j-1)
		}
	}
	print S > sure; print P > poss; print T > tagged
	ts += split(S, x, " "); tp += split(P, x, " ")
}
END { printf "gold: %d lines, %d sure links, %d possible (sure included), " \
	"%d English words tagged\n", NR, ts, tp, tt > "/dev/stderr" }
