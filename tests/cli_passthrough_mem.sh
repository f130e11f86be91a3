#!/bin/sh
# A compressed record that a program passes on unused is never inflated in
# memory (issue 16, item 6): a frame with pad.x, 256 MiB of one byte that
# zlib keeps in 255 KiB, goes through embed, attend and tokenize -d within
# 100 MB of memory, and comes out with the very bytes it went in with.
# Each stage checks it as it reads it, a piece at a time (its zlib stream,
# size and checksum), so a wrong checksum in it is refused by the first
# stage, embed, naming the record and its frame, with nothing written:
# no damage passes through a pipeline to a later stage or a file (issue
# 45, item 9; before, embed, encode, attend and decode -t passed it on
# and exited 0).  tensordump -c checks it within the same bound.
# The bound: ulimit -v where it can be set; sanitizer builds reserve
# terabytes of address space, so there ASan's own RSS limit serves.
set -u
. "$(dirname "$0")/lib/cli.sh"

perro_model m.tsr || exit 1
{
	echo 'tsr-text 1'
	echo 'record src.ids i32 [3] frame 0'
	echo '5 6 2'
	echo 'record pad.x u8 [268435456] frame 0 end zlib 9'
	awk 'BEGIN { s = "a"; while (length(s) < 1048576) s = s s
		for (i = 0; i < 256; i++) print "\"" s "\"" }'
} | tensordump -r > in.tsr || fail "tensordump -r"
[ "$(wc -c < in.tsr)" -lt 300000 ] || fail "in.tsr is not small"

limited() {	# limited KBYTES CMD: CMD within KBYTES of memory
	kb=$1; shift
	lim=
	if (ulimit -v $kb && embed --version) >/dev/null 2>&1; then
		lim="ulimit -v $kb;"
	fi
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$((kb \
		/ 1000)):quarantine_size_mb=8" sh -c "$lim $*"
}
limited 100000 "embed -m m.tsr --threads 1 < in.tsr > emb.tsr" ||
	fail "embed took over 100 MB"
limited 100000 "attend -m m.tsr --threads 1 < emb.tsr > enc.tsr" 2>err &&
	fail "attend took a frame without enc.out"
grep -q 'has no record "enc.out"' err || fail "attend: $(cat err)"
limited 100000 "encode -m m.tsr --threads 1 < emb.tsr > enc.tsr" ||
	fail "encode took over 100 MB"
limited 100000 "attend -m m.tsr --threads 1 < enc.tsr > mem.tsr" ||
	fail "attend took over 100 MB"
limited 100000 "tokenize -d -v vocab < mem.tsr > out.txt" ||
	fail "tokenize -d took over 100 MB"
[ "$(wc -l < out.txt)" -eq 1 ] || fail "tokenize -d: $(cat out.txt)"

# The record as it went in: the same size stored, compressed, and the
# same bytes.  Its header starts where it did (src.ids comes first in
# both, written alike), so its payload does too.
line() { tensordump -H -n pad.x "$1" | awk '{ print $5, $6, $7 }'; }
[ "$(line in.tsr)" = "268435456 260923 zlib,end" ] ||
	fail "in.tsr: $(line in.tsr)"
for f in emb.tsr enc.tsr mem.tsr; do
	[ "$(line $f)" = "268435456 260923 zlib" ] || fail "$f: $(line $f)"
done
# pad.x's payload ends where the end mark, the last TNSR, starts
off=$(($(grep -obUa TNSR in.tsr | tail -1 | cut -d: -f1) - 260923 + 1))
tail -c +$off in.tsr | head -c 260923 > a
for f in emb.tsr enc.tsr mem.tsr; do
	tail -c +$off $f | head -c 260923 > b
	cmp -s a b || fail "$f: pad.x's payload changed"
done
tensordump -c mem.tsr > /dev/null || fail "mem.tsr does not check"

# A wrong checksum in it (pad.x starts at byte 76, after src.ids; its
# crc32 at 88) is refused by every stage that reads it.
[ "$(od -An -c -j 76 -N 4 in.tsr | tr -d ' ')" = TNSR ] ||
	fail "pad.x is not at byte 76"
b=$(od -An -tu1 -j 88 -N 1 in.tsr)
{ head -c 88 in.tsr; printf "\\$(printf %o $(((b + 1) % 256)))"
  tail -c +90 in.tsr; } > bad.tsr
want='record "pad.x", frame 0: checksum mismatch'
for prog in embed encode attend "decode -t" "tokenize -d -v vocab"; do
	case $prog in tokenize*) m= ;; *) m="-m m.tsr --threads 1" ;; esac
	limited 100000 "$prog $m < bad.tsr > out.tsr" 2>err &&
		fail "$prog passed on a damaged pad.x"
	grep -q "<stdin>: byte 76, $want" err || fail "$prog: $(cat err)"
	[ -s out.tsr ] && fail "$prog wrote the damaged frame"
done
limited 100000 "tensordump -c bad.tsr > out" 2>err && fail "tensordump -c took it"
grep -q "byte 76, $want" err || fail "tensordump -c: $(cat err)"
limited 100000 "tensordump -c in.tsr > out" || fail "tensordump -c over 100 MB"

# A damaged compressed record that a stage uses is refused there, named
# as the reader names it, and nothing is written.
printf 'record src.ids i32 [3] frame 0 end zlib 9\n5 6 2\n' |
	tensordump -r > ids.tsr || fail "tensordump -r ids"
b=$(od -An -tu1 -j 12 -N 1 ids.tsr)
{ head -c 12 ids.tsr; printf "\\$(printf %o $(((b + 1) % 256)))"
  tail -c +14 ids.tsr; } > bad.tsr
embed -m m.tsr --threads 1 < ids.tsr > out.tsr || fail "embed: good ids"
embed -m m.tsr --threads 1 < bad.tsr > out.tsr 2>err &&
	fail "embed took a damaged src.ids"
grep -q '<stdin>: byte 0, record "src.ids", frame 0: checksum mismatch' \
	err || fail "embed: $(cat err)"
[ -s out.tsr ] && fail "embed wrote a damaged frame"
exit 0
