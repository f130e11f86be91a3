#!/bin/sh
# translate-markup.sh: translate lines that carry inline markup (<b>, <i>,
# <a href=...>, <br/>: HTML or XML tags), keeping the markup.  The tags
# are taken out, the plain text is translated by beam with -A --cover,
# and markup.awk puts each tag back around the output words that the
# alignment links to the words it enclosed.  A model trained with guided
# alignment (train-step(1); models/bible-es-en.tsr) gives the alignment
# of its guided head, the one that aligns best (doc/alignment.md);
# --cover gives each source word a link, so that no tag loses its words.
#
#   sh examples/translate-markup.sh -m MODEL [-t FILE] [-- OPTION...] < in > out
#
# -t FILE: no translation; the tags go into line N of FILE (a translation
# made elsewhere, by a person say), by score -A's alignment of the pair.
# The OPTIONs go to beam (-k 8, --threads 2, ...), or with -t to score
# (--unlinked ...).  Line N of the output is line N of the input's,
# empty ones included; no tag is ever dropped.  How tags are placed, and
# what is refused (elements not closed on their line, say): markup.awk.
# Needs the toolkit's programs on PATH (or built in ../build/bin).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "translate-markup.sh: $*" >&2; exit 1; }
usage() {
	echo "usage: translate-markup.sh -m MODEL [-t FILE] [-- OPTION...]" \
	     "< in > out"
}
[ "${1-}" != --help ] || { usage; exit 0; }
model= given=
while getopts hm:t: o; do
	case $o in
	h) usage; exit 0 ;;
	m) model=$OPTARG ;;
	t) given=$OPTARG ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$model" ] || { usage >&2; exit 2; }
[ -r "$model" ] || die "$model: cannot read"
[ -z "$given" ] || [ -r "$given" ] || die "$given: cannot read"
command -v beam >/dev/null 2>&1 || PATH=$here/../build/bin:$PATH
for p in tokenize embed encode attend beam score; do
	command -v $p >/dev/null 2>&1 ||
		die "$p: not found (build the toolkit, or put it on PATH)"
done
[ -r "$here/markup.awk" ] || die "$here/markup.awk: not found"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
awk -v mode=strip -v tags="$tmp/tags" -f "$here/markup.awk" > "$tmp/plain"
n=$(wc -l < "$tmp/plain")
if [ -z "$given" ]; then
	# --no-keep: markup.awk counts the plain text's words, and masking
	# a span ("915 123 456") would change the count the links use
	tokenize --no-keep -m "$model" < "$tmp/plain" | embed -m "$model" |
		encode -m "$model" | attend -m "$model" |
		beam -m "$model" -A --cover "$@" > "$tmp/out"
else
	[ "$(wc -l < "$given")" -eq "$n" ] ||
		die "$given has $(wc -l < "$given") lines, the input $n"
	! grep -n "$(printf '\t')" "$given" > "$tmp/tabs" ||
		die "$given:$(head -1 "$tmp/tabs" | cut -d: -f1): a tab"
	paste "$tmp/plain" "$given" | tokenize -p -m "$model" |
		embed -m "$model" | encode -m "$model" | attend -m "$model" |
		score -m "$model" -A --cover "$@" |
		awk -v given="$given" '{ getline t < given; print t " ||| " $0 }' \
		> "$tmp/out"
fi
[ "$(wc -l < "$tmp/out")" -eq "$n" ] ||
	die "the alignment has $(wc -l < "$tmp/out") lines for $n"
awk -v mode=project -v tags="$tmp/tags" -f "$here/markup.awk" < "$tmp/out"
