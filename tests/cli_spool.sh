#!/bin/sh
# examples/attn-spool: every file of the spool translated exactly once, never
# half-written, under concurrent runs and after a run is killed; a failing
# file moved aside while the others complete.  The translator is a fake that
# upper-cases its input and logs the first line of each finished file.
set -u
. "$(dirname "$0")/lib/cli.sh"
spool=$root/examples/attn-spool
export T

cat >"$T/tx" <<'TX'
#!/bin/sh
# A line FAIL fails the file half-way; a line SLOW writes itself, says so
# in $T/slow.PID and waits (unless NOSLOW is set); with RUN set, waits for
# three runs to have started before the first file of each.
if [ -n "${RUN-}" ] && [ ! -e "$T/started.$RUN" ]; then
	: >"$T/started.$RUN"
	i=0
	while [ "$(ls "$T" | grep -c '^started\.')" -lt 3 ]; do
		i=$((i + 1))
		[ $i -lt 400 ] || exit 9
		sleep 0.05
	done
fi
first=
while IFS= read -r line || [ -n "$line" ]; do
	[ -n "$first" ] || first=$line
	[ "$line" = FAIL ] && exit 3
	printf '%s\n' "$line" | tr a-z A-Z
	if [ "$line" = SLOW ] && [ -z "${NOSLOW-}" ]; then
		: >"$T/slow.$$"
		sleep 30
	fi
done
printf '%s\n' "$first" >>"$T/log"
TX
chmod +x "$T/tx"

# setup N NAME...: an empty spool, out dir and log, and files NAME holding
# "NAME" and two more lines.
setup() {
	rm -rf "$T/in" "$T/out" "$T/orig" "$T/log" "$T"/started.* "$T"/slow.*
	mkdir "$T/in" "$T/out" "$T/orig"
	: >"$T/log"
	for n in "$@"; do
		printf '%s\nline two of %s\nthree\n' "$n" "$n" >"$T/orig/$n"
		cp "$T/orig/$n" "$T/in/$n"
	done
}
# check NAME...: exactly these outputs, each the upper-cased original and
# logged once; nothing else in the out dir, the spool or its work dir.
check() {
	for n in "$@"; do
		tr a-z A-Z <"$T/orig/$n" | cmp -s - "$T/out/$n" ||
			fail "$n: output missing or wrong"
		c=$(grep -cxF -e "$(head -n 1 "$T/orig/$n")" "$T/log")
		[ "$c" -eq 1 ] || fail "$n: translated $c times"
	done
	[ "$(ls -A "$T/out" | wc -l)" -eq $# ] ||
		fail "stray files in the out dir: $(ls -A "$T/out" | tr '\n' ' ')"
	[ "$(ls -A "$T/in" | tr '\n' ' ')" = ".work failed " ] ||
		fail "files left in the spool: $(ls -A "$T/in" | tr '\n' ' ')"
	[ -z "$(ls -A "$T/in/.work")" ] ||
		fail "left in the work dir: $(ls -A "$T/in/.work" | tr '\n' ' ')"
}
# waitfor PATTERN: waits (10 s at most) for a file matching $T/PATTERN.
waitfor() {
	i=0
	until ls "$T"/$1 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "timed out waiting for $1"
		sleep 0.05
	done
}
run() { timeout 30 "$spool" -c "$T/tx" "$T/in" "$T/out"; }

# Usage errors.
"$spool" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments: status not 2"
"$spool" -c cat "$T/nonesuch" "$T" 2>/dev/null && fail "missing spool accepted"
"$spool" --help | grep -q usage || fail "--help prints no usage"

# One run; a failing file is moved aside, the others complete.
setup a b c d e
printf 'x\nFAIL\ny\n' >"$T/in/bad"
cp "$T/in/bad" "$T/bad.orig"
run 2>"$T/err"
[ $? -eq 1 ] || fail "a failed file: status not 1"
grep -q "bad: translation failed" "$T/err" || fail "failure not reported"
cmp -s "$T/bad.orig" "$T/in/failed/bad" || fail "failed file not moved aside"
rm "$T/in/failed/bad"
check a b c d e
# Names with spaces and leading dashes; dot files are left alone; empty files.
setup "two words" -n e
: >"$T/orig/empty"; : >"$T/in/empty"
echo partial >"$T/in/.incoming"
run || fail "status not 0"
rm "$T/in/.incoming"
check "two words" -n e empty

# The model is its $1, as it was when the run started, though it is
# replaced meanwhile (as training does).
setup a b
echo v1 >"$T/model"
cat >"$T/tm" <<'TM'
#!/bin/sh
cat "$1" - | tr a-z A-Z
echo v2 >"$T/model.new" && mv "$T/model.new" "$T/model"
TM
chmod +x "$T/tm"
timeout 30 "$spool" -m "$T/model" -c "$T/tm \"\$1\"" "$T/in" "$T/out" ||
	fail "a run with a model failed"
for n in a b; do
	{ echo V1; tr a-z A-Z <"$T/orig/$n"; } | cmp -s - "$T/out/$n" ||
		fail "$n: not translated with the model of the run's start"
done

# The default command: the greedy pipeline, or with -b beam search, of a
# real (untrained) model.
setup s1 s2
m=$T/m.tsr
printf 'la casa verde\nel perro come pan\n' >"$T/corpus"
tokenize -l 270 "$T/corpus" >"$T/vocab" 2>/dev/null &&
	new_model "$m" rnnsearch "$T/vocab" "$T/vocab" || fail "no model made"
for search in decode beam; do
	opt=; [ $search = beam ] && opt=-b
	timeout 30 "$spool" $opt -m "$m" "$T/in" "$T/out" ||
		fail "$search: the run failed"
	for n in s1 s2; do
		tokenize -m "$m" <"$T/orig/$n" | embed -m "$m" | encode -m "$m" |
		    attend -m "$m" | $search -m "$m" | cmp -s - "$T/out/$n" ||
			fail "$n: not the output of the $search pipeline"
		[ -e "$T/in/$n" ] && fail "$n: left in the spool"
		cp "$T/orig/$n" "$T/in/$n"
	done
done

# Three runs at once (each holds its first file until all three have one):
# nothing lost or doubled.
setup $(seq -f f%02g 1 30)
RUN=1 run & p1=$!
RUN=2 run & p2=$!
RUN=3 run & p3=$!
for p in $p1 $p2 $p3; do wait $p || fail "a concurrent run failed"; done
check $(seq -f f%02g 1 30)

# A run killed with SIGKILL (the run and its translator) in the middle of a
# file: the half-written output is never seen, and the next run finishes
# the killed run's file and the rest, each once.
files="a1 a2 a3 m-slow z1 z2 z3"
setup $files
echo SLOW >>"$T/in/m-slow"; echo SLOW >>"$T/orig/m-slow"
setsid sh -c 'echo $$ >"$T/pid"; exec "$0" -c "$T/tx" "$T/in" "$T/out"' \
	"$spool" 2>/dev/null &
waitfor 'slow.*'
kill -s KILL -- -"$(cat "$T/pid")"
wait
[ -e "$T/out/m-slow" ] && fail "output of an unfinished file"
ls -A "$T/out" | grep -q '^\.attn-spool\.' || fail "no half-written temporary"
NOSLOW=1 run || fail "the run after a crash failed"
check $files

# The same, with only the run killed: its translator lives on, yet the next
# run is not blocked.
setup $files
echo SLOW >>"$T/in/m-slow"; echo SLOW >>"$T/orig/m-slow"
setsid sh -c 'echo $$ >"$T/pid"; exec "$0" -c "$T/tx" "$T/in" "$T/out"' \
	"$spool" 2>/dev/null &
waitfor 'slow.*'
kill -s KILL "$(cat "$T/pid")"
NOSLOW=1 run || fail "the run after a crash failed"
kill -s KILL -- -"$(cat "$T/pid")"
wait
check $files

# A run that died after finishing a file, between marking it done and the
# rename of its output: the rename is finished, the file not translated
# again; its other claims are translated.
setup c1 z1
d=$T/in/.work/run.dead
mkdir -p "$d/j.1000000000000000.1" "$d/j.1000000000000000.2"
mv "$T/in/c1" "$d/j.1000000000000000.1/c1"
printf 'd1\nline two of d1\nthree\n' >"$T/orig/d1"
cp "$T/orig/d1" "$d/j.1000000000000000.2/d1"
tr a-z A-Z <"$T/orig/d1" >"$T/out/.attn-spool.0123456789"
ln -s "$T/out/.attn-spool.0123456789" "$d/j.1000000000000000.2/.tmp"
: >"$d/j.1000000000000000.2/.done"
run || fail "the run after a crash between renames failed"
grep -qx d1 "$T/log" && fail "a finished file translated again"
echo d1 >>"$T/log"
check c1 d1 z1

# What a run does not know in a dead run's directory (here the claim of an
# older attn-spool) is left there and reported, not removed.
setup a
mkdir -p "$T/in/.work/run.old/claimed"
echo x >"$T/in/.work/run.old/claimed/x"
run 2>"$T/err" && fail "a directory left behind: status 0"
grep -q "run.old: left behind, holds: claimed" "$T/err" ||
	fail "a directory left behind: not reported"
[ "$(cat "$T/in/.work/run.old/claimed/x")" = x ] ||
	fail "a directory left behind: its claim lost"
rm -r "$T/in/.work/run.old"
check a
exit 0
