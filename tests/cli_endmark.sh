#!/bin/sh
# The stream's end mark (doc/FORMAT.md, The end mark): a stage killed in
# the middle of a pipeline makes its last stage fail, not end with exit 0
# and fewer lines; so does a stream cut exactly between two frames, whose
# whole frames still come out (each stage passes on what it read before
# the cut, then fails).  A
# mark that counts other frames is refused; streams joined by cat read as
# one; --unterminated takes a stream without a mark; tensordump shows the
# marks and fails on a stream without one.
set -eu
. "$(dirname "$0")/lib/cli.sh"

perro_model m.tsr
printf 'el perro\nel gato come\n\nla comida\ncome el perro\n' > in.txt
tokenize -m m.tsr in.txt > full.tsr

# ---- a middle stage killed with SIGKILL mid-stream ---------------------
# Lines go in one at a time through a FIFO; every stage flushes each frame
# (-b 1), so the lines before the kill come out, and then the pipe ends
# cleanly for attend: only the mark can tell it that encode died.
mkfifo lines
: > killed.txt
{
	st=0
	tokenize -m m.tsr < lines | embed -m m.tsr -b 1 |
		sh -c 'echo $$ > enc.pid; exec encode -m m.tsr -b 1' |
		attend -m m.tsr -b 1 | beam -m m.tsr -b 1 > killed.txt || st=$?
	echo $st > killed.status
} 2> killed.err &
pids="$pids $!"
exec 3> lines
printf 'el perro\nel gato come\n' >&3
i=0
while [ "$(wc -l < killed.txt)" -lt 2 ]; do
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "no translation of the first two lines"
	sleep 0.1
done
kill -KILL "$(cat enc.pid)"
printf 'la comida\n' >&3 2>/dev/null || true
exec 3>&-
wait
pids=
[ "$(cat killed.status)" -eq 1 ] ||
	fail "encode killed: beam exited $(cat killed.status), not 1"
[ "$(wc -l < killed.txt)" -eq 2 ] ||
	fail "encode killed: $(wc -l < killed.txt) lines, not the 2 before"
grep -qF "attend: <stdin>: input ends after frame 1 (2 frames since its start) without the stream's end mark" killed.err ||
	fail "attend's message: $(cat killed.err)"
grep -qF "beam: <stdin>: input ends after frame 1 (2 frames since its start) without the stream's end mark" killed.err ||
	fail "beam's message: $(cat killed.err)"

# ---- a stream cut exactly between frames ------------------------------
# The first two lines alone make the same bytes as the first two frames
# of full.tsr, then their mark, the last record: its magic TNSR the last
# in the file (the count, 2, and zero padding hold none), its name 32
# bytes on.
head -2 in.txt | tokenize -m m.tsr > two.tsr
n=$(grep -obUa TNSR two.tsr | tail -1 | cut -d: -f1)
[ "$(tail -c +$((n + 33)) two.tsr | head -c 10)" = stream.end ] ||
	fail "two.tsr does not end with stream.end"
head -c "$n" full.tsr > cut.tsr
head -c "$n" two.tsr | cmp - cut.tsr || fail "the first two frames differ"
tail -c +$((n + 1)) two.tsr > mark2.tsr
# alone, it counts two frames where there are none
exits 1 tensordump -H mark2.tsr
err_has "tensordump: mark2.tsr: byte 0, record \"stream.end\", frame 18446744073709551615: the end mark counts 2 frames, but 0 were read since the stream's start"
exits 1 embed -m m.tsr < cut.tsr
err_has "embed: <stdin>: input ends after frame 1 (2 frames since its start) without the stream's end mark: the program that wrote it stopped early"
[ "$(wc -l < err)" -eq 1 ] || fail "more than one message: $(cat err)"
# the frames before the cut still go out, without a mark of their own
mv out cutemb0.tsr
exits 0 tensordump -c --unterminated cutemb0.tsr
[ "$(cat out)" = "cutemb0.tsr: 8 records in 2 frames, ok, 0 end marks" ] ||
	fail "embed of a cut stream wrote $(cat out)"
st=0
stages m.tsr < cut.tsr 2>/dev/null | beam -m m.tsr > cutout.txt 2> cut.err ||
	st=$?
[ "$st" -eq 1 ] || fail "a cut stream: beam exited $st, not 1"
head -2 in.txt | tokenize -m m.tsr | stages m.tsr | beam -m m.tsr > want2.txt
cmp cutout.txt want2.txt ||
	fail "a cut stream: not the translations of the 2 lines before the cut"
# an empty input is no stream at all
exits 1 embed -m m.tsr < /dev/null
err_has "embed: <stdin>: no input, not even the stream's end mark"

# ---- --unterminated ---------------------------------------------------
exits 0 embed -m m.tsr --unterminated < cut.tsr
mv out cutemb.tsr
[ ! -s err ] || fail "--unterminated warned: $(cat err)"
exits 0 tensordump -c cutemb.tsr
[ "$(cat out)" = "cutemb.tsr: 8 records in 2 frames, ok, 1 end mark" ] ||
	fail "embed --unterminated wrote $(cat out)"
stages m.tsr --unterminated < cut.tsr | decode -m m.tsr > u.txt
head -2 in.txt | tokenize -m m.tsr | stages m.tsr | decode -m m.tsr > u2.txt
cmp u.txt u2.txt || fail "--unterminated translates otherwise"
exits 0 tokenize -d -m m.tsr -n src.ids --unterminated cut.tsr
[ "$(cat out)" = "$(head -2 in.txt)" ] || fail "tokenize -d: $(cat out)"
exits 1 tokenize -d -m m.tsr -n src.ids cut.tsr
err_has "tokenize: cut.tsr: input ends after frame 1"
# saved pairs are streams too: train-step needs their mark
paste in.txt in.txt | tokenize -p -m m.tsr > pairs.tsr
n=$(grep -obUa TNSR pairs.tsr | tail -1 | cut -d: -f1)
head -c "$n" pairs.tsr > pcut.tsr
exits 1 train-step -q -m m.tsr -n 1 pcut.tsr
err_has "train-step: pcut.tsr: input ends after frame 4 (5 frames since its start) without the stream's end mark"
exits 0 train-step -q -m m.tsr -n 1 --unterminated pcut.tsr

# ---- a mark that counts other frames ----------------------------------
cat cut.tsr > bad.tsr
head -3 in.txt | tokenize -m m.tsr > three.tsr
tail -c +$(($(grep -obUa TNSR three.tsr | tail -1 | cut -d: -f1) + 1)) \
	three.tsr >> bad.tsr
exits 1 embed -m m.tsr --unterminated < bad.tsr
err_has "record \"stream.end\", frame 18446744073709551615: the end mark counts 3 frames, but 2 were read since the stream's start"
exits 1 tensordump -c bad.tsr
err_has "the end mark counts 3 frames, but 2 were read"

# ---- streams joined by cat --------------------------------------------
cat full.tsr two.tsr > joined.tsr
exits 0 tensordump -c joined.tsr
[ "$(cat out)" = "joined.tsr: 21 records in 7 frames, ok, 2 end marks" ] ||
	fail "joined: $(cat out)"
exits 0 tensordump -H joined.tsr
[ "$(grep -c '^# end mark' out)" -eq 2 ] || fail "joined: $(cat out)"
sed -n 16p out | grep -qx "# end mark: the stream ended normally after 5 frames" ||
	fail "joined: the first mark not after frame 4: $(cat out)"
sed -n 23p out | grep -qx "# end mark: the stream ended normally after 2 frames" ||
	fail "joined: the second mark not last: $(cat out)"
# not among the records -n or -f chooses
exits 0 tensordump -H -n src.text joined.tsr
grep -q '^# end mark' out && fail "tensordump -n: a mark shown"
stages m.tsr < joined.tsr | beam -m m.tsr > joined.txt
{ cat in.txt; head -2 in.txt; } | tokenize -m m.tsr | stages m.tsr |
	beam -m m.tsr > want.txt
cmp joined.txt want.txt || fail "joined streams translate otherwise"
# after a mark, the second stream may be cut too
cat full.tsr cut.tsr > joincut.tsr
exits 1 embed -m m.tsr < joincut.tsr
err_has "input ends after frame 1 (2 frames since the last end mark)"

# ---- tensordump -------------------------------------------------------
exits 0 tensordump full.tsr
[ "$(tail -1 out)" = "# end mark: the stream ended normally after 5 frames" ] ||
	fail "tensordump: $(tail -1 out)"
[ "$(grep -c ' end$' out)" -eq 5 ] || fail "tensordump: 5 frames"
exits 1 tensordump cut.tsr
[ "$(grep -c ' end$' out)" -eq 2 ] || fail "tensordump cut: not every record"
grep -q '^# end mark' out && fail "tensordump cut: a mark shown"
err_has "tensordump: cut.tsr: input ends after frame 1"
exits 0 tensordump --unterminated cut.tsr
exits 1 tensordump -c cut.tsr
exits 0 tensordump -c --unterminated cut.tsr
[ "$(cat out)" = "cut.tsr: 6 records in 2 frames, ok, 0 end marks" ] ||
	fail "tensordump -c --unterminated: $(cat out)"
# a model file has no mark and needs none; one frame of a pipeline does
exits 0 tensordump -c m.tsr
head -1 in.txt | tokenize -m m.tsr > one.tsr
head -c "$(grep -obUa TNSR one.tsr | tail -1 | cut -d: -f1)" one.tsr > onecut.tsr
exits 1 tensordump -c onecut.tsr
err_has "tensordump: onecut.tsr: input ends after frame 0 (1 frame since its start) without"
# the text form shows the mark as a comment; -r writes its own
tensordump -t full.tsr > full.txt
grep -qx "# end mark: the stream ended normally after 5 frames" full.txt ||
	fail "tensordump -t: no mark"
tensordump -r full.txt | cmp - full.tsr || fail "text round trip"
tensordump -t --unterminated cut.tsr | tensordump -r | cmp - two.tsr ||
	fail "text of a cut stream"
# the mark is the writer's own
printf 'tsr-text 1\nrecord stream.end i64 [] frame 0 end\n3\n' > mark.txt
exits 1 tensordump -r mark.txt
err_has "cannot write a record named \"stream.end\": the end mark is the writer's own"
exit 0
