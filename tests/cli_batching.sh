#!/bin/sh
# Batches are capped by padded tokens as well as by -b: one line of 10,000
# tokens among 300 short ones goes through embed, encode and attend -b 64
# in bounded memory (alone in its batch, not padding 63 others to its
# length), and every stage gives the same bytes as with -b 1 (the
# reference kernels, whose rounding does not depend on the batch's rows).
# The bound: ulimit -v where it can be set; sanitizer builds reserve
# terabytes of address space, so there ASan's own RSS limit serves.
set -eu
. "$(dirname "$0")/lib/cli.sh"

awk 'BEGIN { srand(7); split("ab cd ef gh ij kl mn op", w, " ")
	for (i = 0; i < 301; i++) {
		n = i == 150 ? 10000 : 1 + int(rand() * 8); s = ""
		for (j = 0; j < n; j++) s = s (j ? " " : "") w[1 + int(rand() * 8)]
		print s } }' > in.txt
sed 150q in.txt > short.txt
tokenize -l 300 short.txt > vocab 2>/dev/null
new_model m.tsr rnnsearch vocab vocab emb=16 hidden=16 att=16 maxout=8
tokenize -m m.tsr in.txt > a.tsr
len=$(tensordump a.tsr | awk '$1 == 150 && $2 == "src.ids" { print $4 }')
[ "$len" = "[10001]" ] || fail "the long line has $len ids, not [10001]"

# Without the cap, encode -b 64 pads 64 sentences to 10,001 tokens and
# needs over 500 MB; capped, it needs under 100 MB.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=400"
export ASAN_OPTIONS
limit=
if (ulimit -v 250000 && embed --version) >/dev/null 2>&1; then
	limit="ulimit -v 250000;"
fi
export ATTN_KERNELS=reference
prev=a.tsr
for s in embed encode attend; do
	$s -m m.tsr --max-input 10000 -b 1 < $prev > $s.1.tsr
	sh -c "$limit $s -m m.tsr --max-input 10000 -b 64 < $prev > $s.64.tsr" ||
		fail "$s -b 64 failed within the memory limit"
	cmp $s.1.tsr $s.64.tsr || fail "$s -b 64 and -b 1 differ"
	prev=$s.1.tsr
done
[ "$(tensordump attend.64.tsr | awk '$2 == "src.ids"' | wc -l)" -eq 301 ] ||
	fail "not 301 frames out"
