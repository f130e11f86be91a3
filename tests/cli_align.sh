#!/bin/sh
# score -A's choices (attn_align.h works the computation out by hand in
# tests/test_attn_align.c): on a Transformer of three decoder layers of two
# heads, the default averages every layer ("all", every number; 1,2
# differs), one link per target word unless --min-share adds more,
# --unlinked words get none, and the refusals: a layer or head
# the model lacks (exit 1), a bad list, --layers without -A (exit 2).
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 200 2 5 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 30 dec_layers=3
head -40 pairs.txt > some.txt
tokenize -p -m m.tsr some.txt | stages m.tsr > mem.tsr

al() { score -m m.tsr -A "$@" < mem.tsr; }
al > default.al
al --layers 1,2 > l12.al
al --layers 2,1 --heads all > l21.al
al --layers all > all.al
al --layers 0,1,2 --heads 1,0 > all2.al
cmp -s default.al all.al || fail "the default is not --layers all"
cmp -s l12.al l21.al || fail "--layers 2,1 --heads all differs"
cmp -s all.al all2.al || fail "--layers all is not 0,1,2"
# the choices make a difference on this model, or the above proves little
differ=0
for c in "--layers 1,2" "--layers 2 --heads 1" "--layers 1 --heads 0"; do
	al $c | cmp -s - default.al || differ=$((differ + 1))
done
[ "$differ" -ge 2 ] || fail "only $differ of 3 choices change the alignment"

# one link per target word, every word linked, positions in range
[ "$(wc -l < default.al)" -eq 40 ] || fail "not 40 lines"
paste -d '\t' some.txt default.al | awk -F '\t' '{
	ns = split($1, s, " "); nt = split($2, t, " "); n = split($3, p, " ")
	if (n != nt) { print NR ": " n " links for " nt " words"; bad = 1 }
	for (k = 1; k <= n; k++) {
		split(p[k], ij, "-")
		if (ij[1] >= ns || ij[2] >= nt || seen[NR, ij[2]]++) {
			print NR ": " p[k]; bad = 1 }
	}
} END { exit bad }' || fail "default: not one link per target word"
# --min-share 0: the same; 1e-9: every source word that has any mass
al --min-share 0 | cmp -s - default.al || fail "--min-share 0 differs"
al --min-share 1e-9 > all-links.al
paste -d '\t' some.txt all-links.al | awk -F '\t' '{
	if (split($3, p, " ") != split($1, s, " ") * split($2, t, " ")) bad = 1
} END { exit bad }' || fail "--min-share 1e-9: not every pair linked"
# --unlinked: those words' links go, no other
al --unlinked AB,cd > unl.al
paste -d '\t' some.txt default.al | awk -F '\t' '{
	split($2, t, " "); n = split($3, p, " "); out = ""
	for (k = 1; k <= n; k++) { split(p[k], ij, "-")
		if (t[ij[2] + 1] != "ab" && t[ij[2] + 1] != "cd")
			out = out (out == "" ? "" : " ") p[k] }
	print out }' > want.al
cmp -s unl.al want.al || fail "--unlinked AB,cd"
# --cover: the default's links, and one more for each source word they
# miss, to a target word not --unlinked; every source word then linked
# where a target word is not --unlinked (softmax leaves none without
# mass)
al --cover --unlinked AB,cd > cover.al
paste -d '\t' some.txt unl.al cover.al | awk -F '\t' '{
	ns = split($1, s, " "); split($2, t, " ")
	n = split($3, p, " "); m = split($4, q, " ")
	split("", had); split("", in_c); split("", src)
	for (k = 1; k <= n; k++) { had[p[k]] = 1; split(p[k], ij, "-")
		src[ij[1]] = 1 }
	for (k = 1; k <= m; k++) { in_c[q[k]] = 1; split(q[k], ij, "-")
		if (!(q[k] in had) && (ij[1] in src ||
		    t[ij[2] + 1] == "ab" || t[ij[2] + 1] == "cd")) bad = 1
		src[ij[1]] = 2 }
	for (k = 1; k <= n; k++) if (!(p[k] in in_c)) bad = 1
	free = 0
	for (j in t) if (t[j] != "ab" && t[j] != "cd") free = 1
	for (i = 0; i < ns; i++) if (free && !(i in src)) bad = 1
	if (bad) { print NR; exit 1 } }' ||
	fail "--cover: $(paste unl.al cover.al | head -3)"
cmp -s cover.al unl.al && fail "--cover added no link on 40 lines"

# refusals
if al --layers 3 > /dev/null 2> err; then fail "--layers 3 accepted"; fi
grep -q "layer 3 chosen, the attention has 3 layers" err ||
	fail "--layers 3: $(cat err)"
if al --heads 0,2 > /dev/null 2> err; then fail "--heads 2 accepted"; fi
grep -q "head 2 chosen, the attention has 2 heads" err ||
	fail "--heads 2: $(cat err)"
for bad in "--layers x" "--layers 1,,2" "--layers 64" "--heads -1" \
	   "--min-share 1.5"; do
	st=0
	al $bad > /dev/null 2> err || st=$?
	[ "$st" -eq 2 ] || fail "$bad: exit $st, not 2"
done
st=0
score -m m.tsr --layers 1 < mem.tsr > /dev/null 2> err || st=$?
[ "$st" -eq 2 ] || fail "--layers without -A: exit $st, not 2"
st=0
score -m m.tsr --cover < mem.tsr > /dev/null 2> err || st=$?
[ "$st" -eq 2 ] && grep -q -- '--cover go with --align' err ||
	fail "--cover without -A: exit $st, $(cat err)"
exit 0
