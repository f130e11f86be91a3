#!/bin/sh
# translate-markup.sh: translate lines that carry inline markup (<b>, <i>,
# <a href=...>, <br/>: HTML or XML tags), keeping the markup.  The tags
# are taken out, the plain text is translated by beam with -A, and
# markup.awk puts each tag back around the output words that the
# alignment links to the words it enclosed.  A model trained with guided
# alignment (train-step(1); models/bible-es-en.tsr) gives the alignment
# of its guided head, the one that aligns best (doc/alignment.md).
#
#   sh examples/translate-markup.sh -m MODEL [BEAM-OPTION...] < in > out
#
# Line N of the output translates line N of the input, empty ones
# included; no tag is ever dropped.  How tags are placed, and what is
# refused (elements not closed on their line, say): markup.awk.  The
# options after -m MODEL go to beam (-k 8, --threads 2, ...).  Needs the
# toolkit's programs on PATH (or built in ../build/bin).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "translate-markup.sh: $*" >&2; exit 1; }
usage() {
	echo "usage: translate-markup.sh -m MODEL [BEAM-OPTION...] < in > out"
}
case ${1-} in
-h | --help) usage; exit 0 ;;
-m) [ $# -ge 2 ] || { usage >&2; exit 2; } ;;
*) usage >&2; exit 2 ;;
esac
model=$2
shift 2
[ -r "$model" ] || die "$model: cannot read"
command -v beam >/dev/null 2>&1 || PATH=$here/../build/bin:$PATH
for p in tokenize embed encode attend beam; do
	command -v $p >/dev/null 2>&1 ||
		die "$p: not found (build the toolkit, or put it on PATH)"
done
[ -r "$here/markup.awk" ] || die "$here/markup.awk: not found"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
awk -v mode=strip -v tags="$tmp/tags" -f "$here/markup.awk" > "$tmp/plain"
tokenize -m "$model" < "$tmp/plain" | embed -m "$model" |
	encode -m "$model" | attend -m "$model" |
	beam -m "$model" -A "$@" > "$tmp/out"
n=$(wc -l < "$tmp/plain")
[ "$(wc -l < "$tmp/out")" -eq "$n" ] ||
	die "the translation has $(wc -l < "$tmp/out") lines for $n"
awk -v mode=project -v tags="$tmp/tags" -f "$here/markup.awk" < "$tmp/out"
