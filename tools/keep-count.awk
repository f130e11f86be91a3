# keep-count.awk: the spans kept as written, counted in what came out
# (tools/keep-eval.sh, tests/cli_keep.sh).  Reads line pairs, a line of
# spans (tab-separated, as tokenize --spans prints them) then the output
# line they belong to (paste -d '\n' SPANS OUT).  A span is right when the
# output holds it as many times as the spans' line lists it (with -v
# any=1: at least once); copies are counted the longest span first, each
# copy then blotted out, so that "1" is not counted in "-1".  Prints
# "N: SPAN: C times: OUTPUT" for each span that is not right, then "OK
# TOTAL".
BEGIN { FS = "\t" }

# c[x]: the copies of each span x of s[1..n] in t; m[x]: how many times
# s lists x
function count(t,    i, j, x, k, d) {
	split("", c); split("", m); split("", d)
	for (i = 1; i <= n; i++) { m[s[i]]++; d[i] = s[i] }
	for (i = 1; i <= n; i++)	# the longest first
		for (j = i + 1; j <= n; j++)
			if (length(d[j]) > length(d[i])) {
				x = d[i]; d[i] = d[j]; d[j] = x
			}
	for (i = 1; i <= n; i++) {
		x = d[i]
		if (x == "" || x in c) continue
		c[x] = 0
		while ((k = index(t, x)) > 0) {
			c[x]++
			t = substr(t, 1, k - 1) "\001" substr(t, k + length(x))
		}
	}
}

NR % 2 { n = split($0, s, "\t"); next }
{
	count($0)
	for (i = 1; i <= n; i++) {
		if (s[i] == "")
			continue
		total++
		if (any ? c[s[i]] >= 1 : c[s[i]] == m[s[i]])
			ok++
		else
			print NR / 2 ": " s[i] ": " c[s[i]] " times: " $0
	}
}
END { printf "%d %d\n", ok, total }
