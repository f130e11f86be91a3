#!/bin/sh
# decode and beam --block-repeats=N: an untrained model loops (it says one
# unit over and over); with phrases of up to N units blocked, no output
# holds a phrase of 1 to N units three times in a row, counted on the ids
# (hyp.ids) by awk here, while without the option some outputs do.
# --block-repeats=0 is the default's output, byte for byte, and a value
# above 64 is a usage error.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 3 40 3 8 s > in.txt
tokenize -l 300 in.txt > vocab 2>/dev/null
new_model m.tsr transformer vocab vocab
tokenize -m m.tsr in.txt | stages m.tsr > mem.tsr

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
