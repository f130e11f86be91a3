#!/bin/sh
# examples/attn-spool in a world-writable spool (mode 1777), run by the test,
# against an ordinary user: the attacks of issue 16, items 1 and 2.  Run as
# root (as in CI), the attacker is nobody (setpriv).  Run as anyone else,
# the attacker is the test's own user, and the test still checks that no
# symlink is followed, no file outside the spool is written or read, no
# claim is lost and outputs are no more readable than their inputs; only
# the refusal of a work directory owned by someone else needs root.  The
# translator is a fake that upper-cases its input and logs its first line.
set -u
. "$(dirname "$0")/lib/cli.sh"
spool=$root/examples/attn-spool
chmod 755 "$T"
export T
if [ "$(id -u)" -eq 0 ]; then
	attacker() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	auid=$(id -u nobody)
else
	attacker() { "$@"; }
	auid=$(id -u)
fi

cat >"$T/tx" <<'TX'
#!/bin/sh
# A line FAIL fails the file; a line SLOW says so in $T/slow.PID and waits
# for $T/go (30 s at most), unless NOSLOW is set.
first=
while IFS= read -r line || [ -n "$line" ]; do
	[ -n "$first" ] || first=$line
	[ "$line" = FAIL ] && exit 3
	printf '%s\n' "$line" | tr a-z A-Z
	if [ "$line" = SLOW ] && [ -z "${NOSLOW-}" ]; then
		: >"$T/slow.$$"
		i=0
		while [ ! -e "$T/go" ] && [ $i -lt 600 ]; do
			i=$((i + 1))
			sleep 0.05
		done
	fi
done
printf '%s\n' "$first" >>"$T/log"
TX
chmod 755 "$T/tx"
# A file only root (or the test's user) can read, and one it alone writes.
printf 'the secret\n' >"$T/secret"
printf 'precious\n' >"$T/victim"
chmod 600 "$T/secret" "$T/victim"

# setup: an empty spool of mode 1777 and an empty out dir and log.
setup() {
	rm -rf "$T/in" "$T/out" "$T/log" "$T"/slow.* "$T/dir" "$T/go" "$T/pub"
	mkdir "$T/in" "$T/out" "$T/dir"
	chmod 1777 "$T/in"
	: >"$T/log"
}
run() { timeout 30 "$spool" -c "$T/tx" "$T/in" "$T/out"; }
# waitfor N: waits (10 s at most) for N translators to say SLOW.
waitfor() {
	i=0
	until [ "$(ls "$T" | grep -c '^slow\.')" -ge "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "timed out waiting for $1 translators"
		sleep 0.05
	done
}
# nothing_leaked: the secret's text is in no output and the victim intact.
nothing_leaked() {
	grep -rqi secret "$T/out" "$T/dir" && fail "$1: the secret leaked"
	[ "$(cat "$T/victim")" = precious ] || fail "$1: the victim was written"
}

# 1a. A symlink dropped into the spool is never followed: the file it
# points to is not read, and it is not translated.
setup
attacker ln -s "$T/secret" "$T/in/leak"
attacker sh -c 'echo hello >"$T/in/ok"'
run || fail "symlink: the run failed"
[ -e "$T/out/leak" ] && fail "symlink: a symlink translated"
[ "$(cat "$T/out/ok")" = HELLO ] ||
	fail "symlink: a regular file not translated"
nothing_leaked symlink

# 1a'. The same for a symlink that took a regular file's place between the
# run's look at the spool and its claim: it is found in the claim (left here
# by a run that died just after taking it) and removed, never opened.
setup
mkdir -p "$T/in/.work/run.dead/j.1000000000000000.1"
ln -s "$T/secret" "$T/in/.work/run.dead/j.1000000000000000.1/leak"
run 2>"$T/err" && fail "swapped symlink: status 0"
grep -q "leak: not a regular file" "$T/err" ||
	fail "swapped symlink: not reported"
[ -e "$T/out/leak" ] && fail "swapped symlink: translated"
[ -z "$(ls -A "$T/in/.work")" ] || fail "swapped symlink: left in .work"
nothing_leaked "swapped symlink"

# 1b. A symlink planted as .work/lock, before the first run, truncates
# nothing; as root, the attacker's .work is refused.
setup
attacker sh -c 'mkdir "$T/in/.work" && ln -s "$T/victim" "$T/in/.work/lock"'
attacker sh -c 'echo hello >"$T/in/ok"'
if [ "$(id -u)" -eq 0 ]; then
	run 2>"$T/err" && fail "planted lock: an attacker's .work accepted"
	grep -q "\.work: not a directory of yours" "$T/err" ||
		fail "planted lock: refusal not explained"
else
	run || fail "planted lock: the run failed"
fi
nothing_leaked "planted lock"
# .work a symlink to a directory of ours: refused, nothing made there.
setup
attacker ln -s "$T/dir" "$T/in/.work"
run 2>/dev/null && fail ".work a symlink: accepted"
[ -z "$(ls -A "$T/dir")" ] || fail ".work a symlink: files made through it"

# 1c. With failed a symlink to another directory, a file of a 250-byte name
# (which the old script could never translate) or one whose translation
# fails is not moved there.
long=$(printf "%0250d" 0)
setup
attacker sh -c 'ln -s "$T/dir" "$T/in/failed"; echo hi >"$T/in/$1"
	printf "x\nFAIL\n" >"$T/in/bad"' sh "$long"
run 2>"$T/err" && fail "failed a symlink: accepted"
grep -q "failed: not a directory of yours" "$T/err" ||
	fail "failed a symlink: refusal not explained"
[ -z "$(ls -A "$T/dir")" ] || fail "failed a symlink: files moved through it"
[ -f "$T/in/$long" ] && [ -f "$T/in/bad" ] ||
	fail "failed a symlink: the attacker's files were taken"

# 2a. Two runs claim two versions of one name (the newer submitted while the
# older is translated), both are killed with SIGKILL, then one more run:
# both versions are translated, the newer last.
setup
printf 'doc v1\nSLOW\n' >"$T/in/doc"
setsid sh -c 'echo $$ >"$T/pid1"; exec "$0" -c "$T/tx" "$T/in" "$T/out"' \
	"$spool" 2>/dev/null &
waitfor 1
printf 'doc v2\nSLOW\n' >"$T/in/.doc" && mv "$T/in/.doc" "$T/in/doc"
setsid sh -c 'echo $$ >"$T/pid2"; exec "$0" -c "$T/tx" "$T/in" "$T/out"' \
	"$spool" 2>/dev/null &
waitfor 2
kill -s KILL -- -"$(cat "$T/pid1")" -"$(cat "$T/pid2")"
wait
NOSLOW=1 run || fail "two killed runs: the next run failed"
for v in v1 v2; do
	c=$(grep -cx "doc $v" "$T/log")
	[ "$c" -eq 1 ] || fail "two killed runs: version $v translated $c times"
done
[ "$(head -n 1 "$T/out/doc")" = "DOC V2" ] ||
	fail "two killed runs: the output is not the newer version's"
[ -z "$(ls -A "$T/in/.work")" ] || fail "two killed runs: left in .work"

# 2a'. Both runs alive, the older claim finishing last: the output stays
# the newer version's.
setup
printf 'doc v1\nSLOW\n' >"$T/in/doc"
run & p1=$!
waitfor 1
printf 'doc v2\nSLOW\n' >"$T/in/.doc" && mv "$T/in/.doc" "$T/in/doc"
NOSLOW=1 run || fail "two live runs: the second failed"
: >"$T/go"
wait $p1 || fail "two live runs: the first failed"
for v in v1 v2; do
	c=$(grep -cx "doc $v" "$T/log")
	[ "$c" -eq 1 ] || fail "two live runs: version $v translated $c times"
done
[ "$(head -n 1 "$T/out/doc")" = "DOC V2" ] ||
	fail "two live runs: the older version's output replaced the newer's"
[ -z "$(ls -A "$T/in/.work")" ] || fail "two live runs: left in .work"
[ "$(ls -A "$T/out")" = doc ] || fail "two live runs: stray files in out"

# 2b. Names of the longest legal length (255 bytes) are translated.
long=$(printf "%0255d" 0)
setup
attacker sh -c 'echo hello >"$T/in/$1"' sh "$long"
run || fail "255-byte name: the run failed"
[ "$(cat "$T/out/$long")" = HELLO ] || fail "255-byte name: not translated"
[ -z "$(ls -A "$T/in/failed")" ] || fail "255-byte name: moved to failed"

# Outputs are no more readable than their inputs: a file of mode 600 gives
# an output of mode 600 (as root, the submitter's), one of 644 one of 644.
setup
attacker sh -c 'umask 077; echo private >"$T/in/p"
	umask 022; echo public >"$T/in/q"'
run || fail "modes: the run failed"
[ "$(stat -c %a "$T/out/p")" = 600 ] ||
	fail "modes: a private file's output has mode $(stat -c %a "$T/out/p")"
[ "$(stat -c %a "$T/out/q")" = 644 ] ||
	fail "modes: a public file's output has mode $(stat -c %a "$T/out/q")"
[ "$(stat -c %u "$T/out/p")" = "$auid" ] ||
	fail "modes: the output is not the submitter's"
attacker cat "$T/out/p" >/dev/null 2>&1 ||
	fail "modes: the submitter cannot read the output"

# A spool that others can write and is not sticky (0777) is refused: there
# anyone could replace the work directory; so are a spool and an out dir in
# such a directory, where anyone could replace them.
setup
chmod 777 "$T/in"
run 2>/dev/null && fail "a non-sticky spool of mode 777 accepted"
setup
mkdir -m 777 "$T/pub"
mkdir -m 1777 "$T/pub/in"
timeout 30 "$spool" -c "$T/tx" "$T/pub/in" "$T/out" 2>/dev/null &&
	fail "a spool in a directory of mode 777 accepted"
mkdir -m 755 "$T/pub/out"
timeout 30 "$spool" -c "$T/tx" "$T/in" "$T/pub/out" 2>/dev/null &&
	fail "an out dir in a directory of mode 777 accepted"
exit 0
