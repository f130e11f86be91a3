# bench/lib.sh: what the bench/bench_*.sh scripts share, sourced as
# . "$root/bench/lib.sh" (root: the repository).  Sets data, the Bible
# corpus's directory (ATTN_DATA, default /work/shared/data, then
# bible-es-en), and defines cputime (examples/cputime.sh) and the below.
data=${ATTN_DATA:-/work/shared/data}/bible-es-en
. "$root/examples/cputime.sh"

# need FILE...: unless every FILE can be read, says which cannot and ends
# the benchmark, skipped (exit 0: a missing corpus is not a failure).
need() {
	for f; do
		[ -r "$f" ] && continue
		echo "$(basename "$0" .sh): $f not found; skipped"
		exit 0
	done
}

# in_tmp: moves into a new temporary directory, tmp, removed on exit.
in_tmp() {
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	cd "$tmp" || exit 1
}

# best CMD...: the best CPU seconds of 3 runs of CMD, after in_tmp (its
# stdout to $tmp/out, stderr to $tmp/err; a failure ends the benchmark).
# Called within $(...): times counts the subshell's children.
best() {
	b=
	for _ in 1 2 3; do
		times > "$tmp/t0"
		"$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
		times > "$tmp/t1"
		b=$(cputime "$tmp/t0" "$tmp/t1" |
			awk -v b="${b:-1e9}" '{ print $1 < b ? $1 : b }')
	done
	echo "$b"
}

# now: the wall clock in seconds; median: of the numbers on stdin.
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
