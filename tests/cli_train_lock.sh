#!/bin/sh
# One train-step at a time on a model: a second (training, or --init
# --force) refuses, naming the holder's pid, and changes nothing; a
# directory where saves cannot be written is found before any training;
# a model is replaced by rename (a link to the old file keeps the old
# bytes), never rewritten in place.
set -eu
. "$(dirname "$0")/lib/cli.sh"

awk 'BEGIN { srand(3); for (i = 0; i < 200; i++)
	print "ab cd ef\tgh ij" }' > pairs.txt
tokenize -l 270 pairs.txt > vocab 2>/dev/null
init() { train-step -i -a rnnsearch -s vocab -t vocab -S emb=8 \
	-S hidden=8 -S att=8 -S maxout=4 "$@"; }
init -m m.tsr
tokenize -p -m m.tsr pairs.txt > pairs.tsr
cp m.tsr fresh.tsr

# the first holds the lock from its start; its first update is reported
train-step -m m.tsr -n 100000000 -E 100000000 -L 100000000 --log-time 0 \
	pairs.tsr 2> log1 &
pid=$!
pids=$pid
i=0
until grep -q ' step 1 ' log1; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || fail "no first update in 30 s: $(cat log1)"
	sleep 0.1
done
cp m.tsr snap.tsr
rc=0
train-step -q -m m.tsr -n 5 pairs.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "a second train-step: exit $rc"
grep -q "^train-step: m.tsr is in use: process $pid holds m.tsr.lock$" err ||
	fail "$(cat err)"
rc=0
init -m m.tsr --force 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "--init --force on a model in training: exit $rc"
grep -q "process $pid holds" err || fail "$(cat err)"
cmp m.tsr snap.tsr || fail "the refused runs changed the model"
[ "$(cat m.tsr.lock)" = "$pid" ] || fail "m.tsr.lock holds $(cat m.tsr.lock)"
kill -TERM "$pid"
wait "$pid" || fail "the first train-step exited $?"
pids=
# then the lock is free; the model is replaced by rename
ln m.tsr old.tsr
cp m.tsr old.copy
ino=$(ls -i m.tsr | awk '{ print $1 }')
train-step -q -m m.tsr -n 2 pairs.tsr || fail "after the first: exit $?"
cmp old.tsr old.copy || fail "the model was rewritten in place"
cmp -s m.tsr old.tsr && fail "the model was not replaced"
[ "$(ls -i m.tsr | awk '{ print $1 }')" != "$ino" ] || fail "same inode"
# and a clean exit leaves no m.tsr.lock behind (nor does the first's,
# stopped by TERM; before, both left it holding a pid)
[ -e m.tsr.lock ] && fail "a clean exit left m.tsr.lock"

# a directory that cannot be written: refused before training, the model
# as it was (as nobody where the test runs as root, who may write anyway)
mkdir ro
cp fresh.tsr ro/m.tsr
: > ro/m.tsr.lock
chmod 666 ro/m.tsr.lock
chmod 755 "$T"
chmod 555 ro
as=
[ "$(id -u)" -ne 0 ] ||
	as="setpriv --reuid=nobody --regid=nogroup --clear-groups"
rc=0
$as train-step -m ro/m.tsr -n 5 -L 1 pairs.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "an unwritable directory: exit $rc"
msg="ro/m.tsr: cannot write beside it, where saves go: Permission denied"
grep -q "^train-step: $msg$" err ||
	fail "$(cat err)"
grep -q ' step ' err && fail "trained before finding the directory: $(cat err)"
cmp ro/m.tsr fresh.tsr || fail "the model changed"
chmod 755 ro
exit 0
