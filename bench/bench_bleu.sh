#!/bin/sh
# Scoring 3000 sentences with bleu(1): corpus BLEU (13a, intl, lowercased),
# chrF, chrF++, sentence BLEU and a paired bootstrap test, each the mean CPU
# time of several runs, against `wc -w` reading the same files (the
# baseline: reading the text once), and bleu scoring one sentence (its
# start-up: loading, the dynamic linker, libc).
# The text: the first 3000 lines of the Bible dev set three times over
# (KJV against WEB) when present, else synthetic sentences.
set -u
command -v bleu >/dev/null || { echo "bench_bleu: bleu not on PATH (run make bench)" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
in_tmp
if [ -r "$data/dev.en" ] && [ -r "$data/dev.en2" ]; then
	for i in 1 2 3; do cat "$data/dev.en"; done | head -3000 >hyp
	for i in 1 2 3; do cat "$data/dev.en2"; done | head -3000 >ref
	what="bible dev KJV vs WEB"
else
	awk 'BEGIN { srand(7); for (i = 0; i < 3000; i++) { n = 10 + int(rand() * 30);
		for (j = 0; j < n; j++) printf "%sw%d", j ? " " : "", int(rand() * 2000); print "." } }' >ref
	awk 'BEGIN { srand(7) } { for (i = 1; i <= NF; i++) if (rand() < 0.2) $i = "x"; print }' ref >hyp
	what="synthetic"
fi
sed 's/ the / a /' hyp >hyp2
head -1 hyp >hyp1
head -1 ref >ref1
runs=40

# mean CPU time (user + system) in ms of CMD over $runs runs, from the
# shell's `times` (the machine may be shared: waiting is not the cost;
# called within $(...): times counts the subshell's children)
ms() {
	times >t0
	i=0
	while [ $i -lt $runs ]; do
		eval "$1" >/dev/null ||
			{ echo "bench_bleu: failed: $1" >&2; exit 1; }
		i=$((i + 1))
	done
	times >t1
	cputime t0 t1 | awk -v n=$runs '{ printf "%.2f", 1000 * $1 / n }'
}
base=$(ms "wc -w hyp ref") || exit 1
echo "bleu: 3000 sentences ($what, $(wc -w <hyp) words), CPU time, mean of $runs runs"
printf '  %-40s %8s ms\n' "baseline: wc -w hyp ref" "$base"
for c in "bleu ref1 -b <hyp1" "bleu ref -b <hyp" "bleu ref -tok intl -b <hyp" \
	 "bleu ref -lc -b <hyp" "bleu ref -m chrf -b <hyp" \
	 "bleu ref -m chrf -cw 2 -b <hyp" "bleu ref -sl -b <hyp" \
	 "bleu ref -i hyp hyp2 --paired-bs -f text"; do
	t=$(ms "$c") || exit 1
	printf '  %-40s %8s ms  (%s x baseline)\n' "$c" "$t" \
		"$(echo "$t $base" | awk '{ printf "%.1f", $1 / $2 }')"
done
