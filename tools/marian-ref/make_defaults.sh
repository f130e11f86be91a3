#!/bin/sh
# make_defaults.sh: native Marian's translations of the fixture models
# (tests/fixtures/marian/*.npz, vocab.spm) with no decoding option at all,
# so with Marian's own defaults (beam 12, normalize 0, word-penalty 0,
# max-length-factor 3, no <unk>, an empty line translated to nothing),
# greedy (-b 1) and beam, into tests/fixtures/marian/defaults/; and the
# post model's beam with decoder-wp.yml's settings (a word penalty, a
# length penalty, beam 6) as post.wp.
# cli_marian.sh holds attn's imports of the same models, imported without
# a decoder.yml and run without flags, to them.  Needs native Marian
# (tools/marian-ref/native.sh).
set -eu
. "$(dirname "$0")/native.sh"
marian_native
F=$(cd "$(dirname "$0")/../../tests/fixtures/marian" && pwd)
D=$F/defaults
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp "$F/vocab.spm" "$t/v.spm"	# Marian reads a .spm only by that name
for m in post pre ssru ssru-pre; do
	for s in beam greedy; do
		[ $s = greedy ] && b="-b 1" || b=
		# shellcheck disable=SC2086
		"$MARIAN_BIN/marian-decoder" -m "$F/$m.npz" -v "$t/v.spm" \
			"$t/v.spm" --cpu-threads 1 --quiet $b \
			< "$D/input.txt" > "$D/$m.$s"
	done
done
"$MARIAN_BIN/marian-decoder" -m "$F/post.npz" -v "$t/v.spm" "$t/v.spm" \
	--cpu-threads 1 --quiet -c "$D/decoder-wp.yml" < "$D/input.txt" \
	> "$D/post.wp"
echo "$D: $(ls "$D" | wc -l) files" >&2
