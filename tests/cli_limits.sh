#!/bin/sh
# The limits a user sets on the programs that read streams, and their
# messages: --max-input cuts long sources (every stage, decode, beam and
# score alike) and says which line; --limit refuses a large record;
# --window-mem and the flush after every window make a pipeline answer
# line by line; numeric options out of range, unknown options and missing
# arguments are one-line usage errors (exit 2); a terminal gets no binary
# stream, and tokenize no stream as text.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
one_line() {
	[ "$(wc -l < err)" -eq 1 ] || fail "$1: not one line: $(cat err)"
}

perro_model m.tsr || exit 1
# line 2: thousands of units
awk 'BEGIN { print "el gato"; s = "a"
	for (i = 1; i < 1500; i++) s = s " b a"; print s " b"; print "el perro" }' \
	> in.txt
tokenize -m m.tsr in.txt > in.tsr || exit 1
U=$(tensordump in.tsr |
	awk '$1 == 1 && $2 == "src.ids" { gsub(/[][]/, "", $4); print $4 - 1 }')
[ "$U" -gt 2000 ] || { fail "line 2 has $U units"; exit 1; }

# ---- --max-input ---------------------------------------------------------
exits 0 embed -m m.tsr < in.tsr
err_has "embed: line 2: $U units cut to 1024 (--max-input)"
[ "$(wc -l < err)" -eq 1 ] || fail "embed warned more than once: $(cat err)"
mv out emb.tsr
tensordump -t -n src.ids -f 1 emb.tsr > ids.txt
grep -qx 'record src.ids i32 \[1025\] frame 1' ids.txt ||
	fail "src.ids not cut to 1025: $(head -2 ids.txt)"
# the first 1024 ids kept, then </s> (2)
tensordump -t -n src.ids -f 1 in.tsr | sed 1,2d | tr ' ' '\n' | sed 1024q \
	> want
echo 2 >> want
sed 1,2d ids.txt | tr ' ' '\n' > got
cmp -s want got || fail "the cut src.ids is not the first 1024 ids and </s>"
tensordump emb.tsr | awk '$2 == "src.emb" { print $4 }' > shapes
[ "$(sed -n 2p shapes)" = "[1025,8]" ] || fail "src.emb: $(cat shapes)"
# a stage further on cuts every record indexed by source position
exits 0 encode -m m.tsr --max-input 5000 < emb.tsr
mv out enc.tsr
exits 0 attend -m m.tsr --max-input 10 < enc.tsr
err_has "attend: line 2: 1024 units cut to 10 (--max-input)"
mv out mem.tsr
tensordump -f 1 mem.tsr | awk '{ print $2, $4 }' > shapes
for r in "src.ids [11]" "src.emb [11,8]" "enc.out [11,16]" \
	 "att.keys [11,8]" "att.init [8]"; do
	grep -qxF "$r" shapes || fail "attend --max-input 10: no $r"
done
# decode, beam and score cut the memory alike: att.weights [T, 6]
exits 0 attend -m m.tsr < enc.tsr
mv out mem.tsr
for p in decode beam; do
	exits 0 $p -m m.tsr -c 3 --max-input 5 -t < mem.tsr
	err_has "$p: line 2: 1024 units cut to 5 (--max-input)"
	tensordump -f 1 -n att.weights out | grep -q ' \[[0-9]*,6\] ' ||
		fail "$p --max-input 5: $(tensordump -f 1 -n att.weights out)"
done
exits 2 embed -m m.tsr --max-input 0 < in.tsr
one_line "--max-input 0"

# ---- --limit -------------------------------------------------------------
exits 1 embed -m m.tsr --limit 12k < in.tsr
err_has "exceeds the limit of 12288 bytes"
exits 2 score -m m.tsr --limit 1x < mem.tsr
exits 1 tokenize -m m.tsr -d -n src.ids --limit 100 < in.tsr
err_has "exceeds the limit of 100 bytes"

# ---- numbers out of range, bad options: one line, exit 2 -----------------
for cmd in "decode -m m.tsr -b 200000000" "beam -m m.tsr -k 100000" \
	   "decode -m m.tsr -a -1" "decode -m m.tsr -a 0 -c 0" \
	   "decode -m m.tsr -a nan" "beam -m m.tsr -l inf" \
	   "beam -m m.tsr -n 0" "embed -m m.tsr --threads 0" \
	   "score -m m.tsr --window-mem 0" "encode -m m.tsr -b 0" \
	   "decode -m m.tsr --alpha 1" "embed -m m.tsr --bogus" \
	   "tokenize -m m.tsr -x" "bleu -bogus r" "tensordump --bogus" \
	   "decode -m" "attend --model" "score -m m.tsr --align=1" \
	   "decode -m m.tsr -t --scores" "beam -m m.tsr -n 2 --scores" \
	   "train-step -m m.tsr --bogus" "train-step -m m.tsr --threads 0" \
	   "train-step -m"; do
	exits 2 $cmd < mem.tsr
	one_line "$cmd"
	err_has "(try '${cmd%% *} --help')"
done
exits 2 decode -m m.tsr --bogus
err_has "decode: unknown option '--bogus' (try 'decode --help')"
exits 2 train-step -m m.tsr --bogus
err_has "train-step: unknown option '--bogus' (try 'train-step --help')"
exits 2 beam -m m.tsr -k 100000
err_has "beam: option --beam: '100000' is not an integer from 1 to 1000"

# ---- --threads: the same output ------------------------------------------
decode -m m.tsr -c 3 < mem.tsr > d.all 2>/dev/null
exits 0 decode -m m.tsr -c 3 --threads 1 < mem.tsr
cmp -s d.all out || fail "decode --threads 1 differs"

# ---- a line in, its translation out, before the next line ----------------
# A producer that keeps the pipe open: with -b 1 (and with -b 64 but a
# window of one byte) each line is answered at once.
for last in "-b 1" "-b 64 --window-mem 1"; do
	rm -f fin fout
	mkfifo fin fout
	sh -c "tokenize -m m.tsr | embed -m m.tsr -b 1 | encode -m m.tsr -b 1 |
	       attend -m m.tsr -b 1 | decode -m m.tsr -c 3 $last" \
		< fin > fout 2>/dev/null &
	pids="$pids $!"
	exec 3> fin 4< fout
	n=0
	for line in "el perro" "el gato come" "la comida"; do
		echo "$line" >&3
		got=$(timeout 60 head -n 1 <&4) || {
			fail "decode $last: no answer to line $((n + 1))"
			break
		}
		n=$((n + 1))
	done
	exec 3>&- 4<&-
	wait
done

# ---- no binary stream to a terminal, no stream as text -------------------
for cmd in "tokenize -m m.tsr in.txt" "embed -m m.tsr < in.tsr" \
	   "decode -m m.tsr -t < mem.tsr"; do
	script -qec "$cmd" /dev/null > tty.out 2>&1; got=$?
	[ $got -eq 1 ] || fail "$cmd to a terminal exited $got"
	grep -q 'not writing a binary stream to a terminal' tty.out ||
		fail "$cmd to a terminal: $(head -c 200 tty.out)"
done
script -qec "embed -m m.tsr --force < in.tsr" /dev/null > tty.out 2>&1 ||
	fail "embed --force to a terminal failed"
exits 1 tokenize -m m.tsr < in.tsr
err_has "tokenize: <stdin>: a tensor stream, not text"
[ -s out ] && fail "tokenize wrote output for a stream"

[ $errors -eq 0 ]
