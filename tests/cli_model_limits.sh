#!/bin/sh
# A crafted model config is refused at once, with a message naming the
# key or the parameter, before anything large is allocated: sizes beyond
# their maxima (10,000 layers, d_model 2^20), and sizes in range whose
# parameters could not fit in the file (1,000 layers, d_model 16384 in a
# file of 20 KB).  The programs run in a few hundred MB of address space
# (ulimit -v; ASan's allocation limit in the sanitizer build), so that an
# allocation the config asks for would end in "out of memory", not the
# message.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

echo x | tokenize -l 260 > vocab 2>/dev/null
new_model tf.tsr transformer vocab vocab d_model=2 heads=1 ffn=2 ||
	fail "init tf"
new_model rnn.tsr rnnsearch vocab vocab emb=2 hidden=2 att=2 maxout=2 ||
	fail "init rnn"
tensordump -t tf.tsr > tf.txt && tensordump -t rnn.tsr > rnn.txt ||
	fail "tensordump -t"

# craft IN.txt OUT.tsr KEY=VALUE...: the model with those config values
# (the config record's size in the text form adjusted to match, in bytes
# whatever the locale).
craft() {
	in=$1 out=$2
	shift 2
	LC_ALL=C awk -v kv="$*" '
	BEGIN { n = split(kv, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], p, "="); val[p[1]] = p[2] } }
	/^record model.config / { cfg = 1; head = $0; next }
	cfg && /^record / { cfg = 0; flush() }
	cfg { line = $0; k = line; sub(/^"/, "", k); sub(/=.*/, "", k)
		if (k in val) {
			old = line; sub(/^"[^=]*=/, "", old); sub(/\\n"$/, "", old)
			delta += length(val[k]) - length(old)
			line = "\"" k "=" val[k] "\\n\""
		}
		body = body line "\n"; next }
	{ print }
	function flush(   s) {
		s = head; match(s, /\[[0-9]+\]/)
		size = substr(s, RSTART + 1, RLENGTH - 2) + delta
		print substr(s, 1, RSTART) size substr(s, RSTART + RLENGTH - 1)
		printf "%s", body
	}' "$in" > crafted.txt
	tensordump -r crafted.txt > "$out" || fail "$out: tensordump -r"
}

# in_little_memory CMD...: runs CMD where an allocation beyond a few
# hundred MB fails.
if grep -q __asan_init "$(command -v embed)"; then
	in_little_memory() {
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=300:allocator_may_return_null=1 "$@"
	}
else
	in_little_memory() { (ulimit -v 400000 && "$@"); }
fi

# refused FILE MESSAGE: embed refuses model FILE with MESSAGE, exit 1.
refused() {
	in_little_memory embed -m "$1" </dev/null >/dev/null 2>err
	st=$?
	[ $st -eq 1 ] || fail "$1: exit $st, not 1"
	grep -qF -- "$2" err || { fail "$1: no '$2' in:"; cat err >&2; }
}

craft tf.txt sane.tsr enc_layers=1
echo x | tokenize -m sane.tsr | in_little_memory embed -m sane.tsr \
	>/dev/null || fail "the untouched model is refused"

craft tf.txt layers.tsr enc_layers=10000
refused layers.tsr "layers.tsr: config: enc_layers=10000 is out of range (1 .. 1024)"
craft tf.txt layers.tsr dec_layers=1000
refused layers.tsr "layers.tsr: the config declares more parameters than the file holds: 'dec."
craft tf.txt wide.tsr d_model=1048576 heads=1
refused wide.tsr "wide.tsr: config: d_model=1048576 is out of range (1 .. 16384)"
craft tf.txt wide.tsr d_model=16384 heads=1
refused wide.tsr "wide.tsr: the config declares more parameters than the file holds: 'tgt.emb' [260, 16384]"
craft tf.txt ffn.tsr ffn=65537
refused ffn.tsr "ffn.tsr: config: ffn=65537 is out of range (1 .. 65536)"
craft rnn.txt rnn.tsr hidden=16384
refused rnn.tsr "rnn.tsr: the config declares more parameters than the file holds"
craft rnn.txt rnn.tsr hidden=16385
refused rnn.tsr "rnn.tsr: config: hidden=16385 is out of range (1 .. 16384)"
craft rnn.txt rnn.tsr src_vocab=3
refused rnn.tsr "src_vocab=3, tgt_vocab=260: a vocabulary has at least"

exit $((errors > 0))
