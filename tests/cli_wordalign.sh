#!/bin/sh
# align(1), the word aligner: on pairs made from a known lexicon with
# adjacent words swapped, the links come back; one output line per pair,
# empty pairs empty lines; "src ||| tgt" on stdin gives what two files
# give; a saved model aligns as the training run did, the HMM's too;
# the posterior heuristic; any --threads the same; a fixed corpus's
# model byte for byte as saved before; and the refusals: line counts
# that differ, a line without "|||", a file that is no model (exit 1),
# bad options (exit 2).
set -eu
. "$(dirname "$0")/lib/cli.sh"

# 300 pairs: source words w0..w19 (none twice in a line), target word
# of wK "vN", N = (7K + 3) mod 20, adjacent target words swapped.
awk 'BEGIN { srand(5)
	for (p = 0; p < 300; p++) {
		n = 3 + int(rand() * 6); s = t = ""
		for (k in used) delete used
		for (i = 0; i < n; i++) {
			do w[i] = int(rand() * 20); while (w[i] in used)
			used[w[i]] = 1
			s = s (i ? " " : "") "w" w[i]
		}
		for (j = 0; j < n; j++) {
			i = (j % 2 == 0 && j + 1 < n) ? j + 1 : (j % 2 ? j - 1 : j)
			t = t (j ? " " : "") "v" ((w[i] * 7 + 3) % 20)
		}
		print s > "src"; print t > "tgt"
	} }'
# the expected links: i-j with i the swapped j
awk '{ n = NF; out = ""
	for (i = 0; i < n; i++) {
		j = (i % 2 == 0 && i + 1 < n) ? i + 1 : (i % 2 ? i - 1 : i)
		out = out (i ? " " : "") i "-" j }
	print out }' src > want

align -q -I 8 -o m.tsr src tgt > got || fail "align exited $?"
cmp -s got want || fail "grow-diag-final-and: $(diff got want | head -4)"
for s in intersect union forward reverse; do
	align -q -I 8 -s $s src tgt > got.$s
	cmp -s got.$s want || fail "$s: $(diff got.$s want | head -4)"
done

# the saved model: the same links, and on lines it never saw
align -m m.tsr src tgt > again
cmp -s again got || fail "-m differs from the training run"
# (w1 v10, w2 v17, w3 v4, w4 v11; zz and yy in no vocabulary)
printf 'w1 w2\nw3 zz w4\n' > new.src
printf 'v17 v10\nv4 yy v11\n' > new.tgt
align -m m.tsr -s intersect new.src new.tgt > new.al
printf '0-1 1-0\n0-0 1-1 2-2\n' | cmp -s - new.al ||
	fail "unseen lines: $(cat new.al | tr '\n' '|')"

# the HMM after Model 2 (--hmm): the same links, from a model of
# version 2 that -m reads back
align -I 8 -H 5 -o h.tsr src tgt > got.h 2> h.log
cmp -s got.h want || fail "--hmm: $(diff got.h want | head -4)"
grep -q 'reverse: HMM iteration 5 of 5: perplexity' h.log ||
	fail "--hmm progress: $(tail -2 h.log)"
tensordump -n align.version -t h.tsr | tail -1 | grep -qx 2 ||
	fail "--hmm: not version 2"
align -m h.tsr src tgt | cmp -s - got.h || fail "-m of an HMM differs"

# the posterior heuristic: on this corpus each link is sure both ways;
# at 0.5 the links come back, and a saved model gives the same
align -q -I 8 -s posterior src tgt > got.p
cmp -s got.p want || fail "posterior: $(diff got.p want | head -4)"
align -m m.tsr -s posterior --threshold 0.5 src tgt | cmp -s - got.p ||
	fail "posterior: -m differs from the training run"

# pairs on stdin; empty lines give empty lines, line for line
{ head -3 src; echo; head -5 src | tail -2; echo x; } > e.src
{ head -3 tgt; echo; head -5 tgt | tail -2; echo; } > e.tgt
paste -d '#' e.src e.tgt | sed 's/#/ ||| /' > e.pairs
align -q -I 8 e.src e.tgt > e.al
align -q -I 8 < e.pairs > e2.al
cmp -s e.al e2.al || fail "stdin pairs differ from two files"
[ "$(wc -l < e.al)" -eq 7 ] || fail "$(wc -l < e.al) lines for 7 pairs"
[ -z "$(sed -n 4p e.al)" ] && [ -z "$(sed -n 7p e.al)" ] ||
	fail "empty pairs have links: $(sed -n '4p;7p' e.al | tr '\n' '|')"

# any thread count, the same model file and links
align -q --threads 1 -o t1.tsr src tgt > t1.al
align -q --threads 3 -o t3.tsr src tgt > t3.al
cmp -s t1.tsr t3.tsr || fail "--threads 1 and 3 save different models"
cmp -s t1.al t3.al || fail "--threads 1 and 3 align differently"

# a fixed corpus (integer arithmetic only: the same in any awk) gives
# the model files that align saved before the cells were built by one
# sort of keys and slots, byte for byte (cksum; glibc's libm on x86-64,
# where they were saved)
awk 'BEGIN { x = 7
	for (p = 0; p < 1500; p++) {
		x = x * 48271 % 2147483647; n = 1 + x % 30
		s = t = ""
		for (i = 0; i < n; i++) {
			x = x * 48271 % 2147483647; r = x % 1000
			w = int(r * r / 2000)
			s = s (i ? " " : "") (w % 5 ? "s" : "S") w
			x = x * 48271 % 2147483647
			if (x % 10 < 8)
				t = t (t == "" ? "" : " ") "t" (w * 7 + 3) % 400
			if (x % 10 == 9)
				t = t (t == "" ? "" : " ") "the"
		}
		print s > "fixed.src"; print t > "fixed.tgt"
	} }'
align -q --no-fold -t -o f1.tsr fixed.src fixed.tgt
align -q --threads 2 -t -o f2.tsr fixed.src fixed.tgt
# words are folded unless --no-fold says otherwise
align -q -f -t -o f3.tsr fixed.src fixed.tgt
cmp -s f2.tsr f3.tsr || fail "the default is not --fold"
! cmp -s f1.tsr f2.tsr || fail "--no-fold folds"
if [ "$(uname -m)" = x86_64 ] && ldd --version 2>&1 | grep -qi glibc; then
	[ "$(cksum < f1.tsr)" = "1210279396 36868" ] ||
		fail "fixed corpus, --no-fold: $(cksum < f1.tsr), want 1210279396 36868"
	[ "$(cksum < f2.tsr)" = "1594235217 36868" ] ||
		fail "fixed corpus, --fold: $(cksum < f2.tsr), want 1594235217 36868"
fi

# progress on stderr unless --quiet; nothing else
align -I 2 src tgt 2> progress > /dev/null
grep -q "^align: forward: iteration 2 of 2: perplexity" progress ||
	fail "no progress: $(head -3 progress)"
align -q -I 2 src tgt 2> quiet > /dev/null
[ ! -s quiet ] || fail "--quiet printed: $(cat quiet)"

# refusals
expect() {	# STATUS PATTERN COMMAND...: the exit status and message
	_st=$1 _pat=$2
	shift 2
	set +e
	"$@" > out 2> err
	_got=$?
	set -e
	[ "$_got" -eq "$_st" ] || fail "$*: exit $_got, want $_st"
	grep -q "^align: .*$_pat" err || fail "$*: said: $(cat err)"
}
head -10 tgt > short
expect 1 "has 300 lines but short has 10" align -q src short
expect 1 "has 300 lines but short has 10" align -q short src
echo "no separator" | expect 1 "line 1: no \"|||\"" align -q
expect 1 "m.tsr.x" align -m m.tsr.x src tgt
expect 1 "not a model of align" align -m "$root/models/bible-es-en.tsr" src tgt
expect 2 "not grow-diag-final-and" align -s grow src tgt
expect 2 "want SOURCE and TARGET" align src
expect 2 "no training options" align -m m.tsr -I 3 src tgt
expect 2 "no training options" align -m m.tsr --no-fold src tgt
expect 2 "without --save" align -t src tgt
expect 2 "null-prob" align -p 1 src tgt
expect 2 "threshold: '0.4' is not from 0.5 to 1" align -s posterior \
	--threshold 0.4 src tgt
expect 2 "give -s posterior" align --threshold 0.9 src tgt
expect 2 "unknown option" align --bogus src tgt
# a failed save leaves the old model whole
cp m.tsr keep.tsr
expect 1 "nodir" align -q -o nodir/m.tsr src tgt
cmp -s m.tsr keep.tsr || fail "the old model changed"
align --help | grep -q "^usage: align" || fail "--help"
align --version | grep -q "^align (attn) " || fail "--version"
