#!/bin/sh
# decode and beam --block-repeats=N: an untrained model loops (it says one
# unit over and over); with phrases of up to N units blocked, no output
# holds a phrase of 1 to N units three times in a row, counted on the ids
# (hyp.ids) by awk here, while without the option some outputs do.
# --block-repeats=0 is the default's output, byte for byte, and a value
# above 64 is a usage error.
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "cli_repeats: $*" >&2; exit 1; }

awk 'BEGIN { srand(3); split("ab cd ef gh ij kl mn op", w, " ")
	for (i = 0; i < 40; i++) { n = 3 + int(rand() * 6); s = ""
		for (j = 0; j < n; j++) s = s (j ? " " : "") w[1 + int(rand() * 8)]
		print s } }' > in.txt
tokenize -l 300 in.txt > vocab 2>/dev/null
train-step -i -m m.tsr -a transformer -s vocab -t vocab -S d_model=16 \
	-S heads=2 -S ffn=32 -S enc_layers=1 -S dec_layers=1
tokenize -m m.tsr in.txt | embed -m m.tsr | encode -m m.tsr |
	attend -m m.tsr > mem.tsr

# The lines (one per frame) whose ids hold a phrase of 1..N ids said three
# times in a row.
repeats() {
	tensordump -n hyp.ids -t | awk -v N="$1" '
	function check(   k, i, j) {
		for (k = 1; k <= N; k++)
			for (i = 1; i + 3 * k - 1 <= n; i++) {
				for (j = 0; j < 2 * k; j++)
					if (id[i + j] != id[i + j + k])
						break
				if (j == 2 * k)
					return 1
			}
		return 0
	}
	/^record/ { if (n) r += check(); n = 0; next }
	/^[0-9]/ { for (f = 1; f <= NF; f++) id[++n] = $f }
	END { if (n) r += check(); print r + 0 }'
}

for prog in decode beam; do
	n0=$($prog -m m.tsr -t < mem.tsr | repeats 4)
	[ "$n0" -gt 0 ] || fail "$prog: the untrained model does not loop"
	for N in 1 4 8; do
		n=$($prog -m m.tsr -t --block-repeats=$N < mem.tsr | repeats $N)
		[ "$n" = 0 ] ||
			fail "$prog --block-repeats=$N: $n outputs repeat"
	done
	$prog -m m.tsr < mem.tsr > a.txt
	$prog -m m.tsr --block-repeats 0 < mem.tsr > b.txt
	cmp -s a.txt b.txt || fail "$prog --block-repeats 0 changes the output"
	rc=0
	$prog -m m.tsr --block-repeats 65 < mem.tsr > /dev/null 2> err || rc=$?
	[ $rc = 2 ] || fail "$prog --block-repeats 65: exit $rc, not 2"
	grep -q -- '--block-repeats' err || fail "$prog: $(cat err)"
done
