#!/bin/sh
#
# length-experiment.sh: BLEU by source sentence length, the experiment of
# Bahdanau, Cho and Bengio (2014), Figure 2, on any dev set.
#
#   length-experiment.sh [-b BUCKETS] [-k BEAM] [-o DIR] [-t TITLE]
#                        SRC REF NAME=FILE[:greedy|:beam] ...
#
# Each model (a model file, which is translated here with the toolkit's
# pipeline, greedy by default or with beam search of width BEAM; or a file
# of translations already made, one line per line of SRC) is scored with
# sacreBLEU-compatible BLEU (bleu -b) on each bucket of source lengths and
# on the whole set.  The length of a sentence is its number of words
# (blank-separated) in SRC; the buckets, BUCKETS of them (default 5), hold
# about as many sentences each (cut at the quantiles of the length; equal
# lengths stay in one bucket, so some buckets may merge).
#
# Written into DIR (default length-experiment):
#   NAME.hyp     the translations of each model
#   table.tsv    bucket, source words (LO-HI), sentences, BLEU of each model;
#                the last row, "all", is the whole set
#   table.md     the same as a Markdown table (also printed on stdout)
#   plot.svg     BLEU against the length buckets, a line per model
#                (drawn by plot-svg.awk, beside this script)
#
# Needs the toolkit's programs on PATH (or built in ../build/bin) and
# standard Unix tools only.  ATTN_THREADS sets the programs' threads.
set -eu
prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	echo "usage: $prog [-b BUCKETS] [-k BEAM] [-o DIR] [-t TITLE] SRC REF NAME=FILE[:greedy|:beam] ..."
	echo "BLEU by source length: FILE is a model file, or a file of translations."
}
die() {
	echo "$prog: $*" >&2
	exit 1
}
number() {	# number OPTION VALUE: a positive integer, or a usage error
	case $2 in
	'' | *[!0-9]* | 0 | 0*) echo "$prog: $1: \"$2\" is not a positive number" >&2
		usage >&2; exit 2 ;;
	esac
}

[ "${1-}" = --help ] && { usage; exit 0; }
buckets=5 beam=5 out=length-experiment title="BLEU by source sentence length"
while getopts b:hk:o:t: opt; do
	case $opt in
	b) number -b "$OPTARG"; buckets=$OPTARG ;;
	k) number -k "$OPTARG"; beam=$OPTARG ;;
	o) out=$OPTARG ;;
	t) title=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { usage >&2; exit 2; }
src=$1 ref=$2
shift 2

command -v decode >/dev/null 2>&1 || PATH=$here/../build/bin:$PATH
for p in tokenize embed encode attend decode beam bleu; do
	command -v $p >/dev/null 2>&1 || die "$p: not found (build the toolkit, or put it on PATH)"
done
[ -f "$here/plot-svg.awk" ] || die "$here/plot-svg.awk: not found"
for f in "$src" "$ref"; do
	[ -r "$f" ] || die "$f: cannot read"
done
lines=$(wc -l <"$src")
[ "$lines" -eq "$(wc -l <"$ref")" ] ||
	die "$src has $lines lines, $ref $(wc -l <"$ref")"
[ "$lines" -ge "$buckets" ] ||
	die "$src: $lines sentences are too few for $buckets buckets"

# The models: NAME, FILE, how, checked before any long work starts.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
for m; do
	name=${m%%=*} file=${m#*=} how=greedy
	case $file in
	*:greedy) file=${file%:greedy} ;;
	*:beam) file=${file%:beam} how=beam ;;
	esac
	case $m in *=*) ;; *) die "$m: not NAME=FILE" ;; esac
	case $name in
	'' | *[!A-Za-z0-9._-]*) die "$m: a NAME of letters, digits and ._- only" ;;
	esac
	grep -qxF "$name" "$T/names" 2>/dev/null && die "$name: given twice"
	echo "$name" >>"$T/names"
	[ -r "$file" ] || die "$file: cannot read"
	if [ "$(head -c 4 "$file")" != TNSR ]; then
		how=text
		[ "$(wc -l <"$file")" -eq "$lines" ] ||
			die "$file: $(wc -l <"$file") translations for $lines sentences"
	fi
	printf '%s\t%s\t%s\n' "$name" "$how" "$file" >>"$T/models"
done

mkdir -p "$out"

# The buckets: the bucket of every line of SRC (in $T/bucket), and each
# bucket's number, shortest and longest sentence and size ($T/ranges).
awk '{ print NF }' "$src" >"$T/len"
sort -n "$T/len" >"$T/sorted"
awk -v B="$buckets" -v ranges="$T/ranges" '
	NR == FNR { s[++n] = $1; next }
	FNR == 1 {      # upper bounds at the quantiles k/B of the lengths
		for (k = 1; k < B; k++)
			cut[k] = s[int(k * n / B + 0.5)]
	}
	{
		for (b = 1; b < B && $1 > cut[b]; b++)
			;
		raw[FNR] = b
		size[b]++
		if (!(b in lo) || $1 < lo[b]) lo[b] = $1
		if (!(b in hi) || $1 > hi[b]) hi[b] = $1
	}
	END {           # buckets left empty by ties are dropped
		for (b = 1; b <= B; b++)
			if (size[b]) {
				num[b] = ++used
				printf "%d\t%d\t%d\t%d\n", used, lo[b], hi[b],
				    size[b] >ranges
			}
		for (i = 1; i <= n; i++)
			print num[raw[i]]
	}' "$T/sorted" "$T/len" >"$T/bucket"
nb=$(wc -l <"$T/ranges")

# split FILE PREFIX: the lines of FILE into PREFIX.1, PREFIX.2, ... by
# bucket (every bucket file exists, even when empty).
split_buckets() {
	for b in $(cut -f 1 "$T/ranges"); do : >"$2.$b"; done
	awk -v p="$2" 'NR == FNR { b[FNR] = $1; next }
		{ print > (p "." b[FNR]) }' "$T/bucket" "$1"
}
split_buckets "$ref" "$T/ref"

# score REF HYP: the BLEU of HYP; its warnings (empty translations) are
# only shown when it fails.
score() {
	bleu -b -w 2 "$1" -i "$2" 2>"$T/err" ||
		die "$name: bleu $1 -i $2: $(cat "$T/err")"
}

# utf8 IN OUT: IN with every byte that is not part of valid UTF-8 as
# U+FFFD, as Python's errors="replace" reads it: a weak model's byte units
# may not make whole characters, and bleu refuses invalid UTF-8.
utf8() {
	LC_ALL=C awk -v what="$name" -v prog="$prog" '
	BEGIN {
		c = "[\200-\277]"
		valid = "^([\001-\177]|[\302-\337]" c "|\340[\240-\277]" c \
		    "|[\341-\354\356\357]" c c "|\355[\200-\237]" c \
		    "|\360[\220-\277]" c c "|[\361-\363]" c c c \
		    "|\364[\200-\217]" c c ")+"
	}
	{
		out = ""
		for (s = $0; s != ""; )
			if (match(s, valid)) {
				out = out substr(s, 1, RLENGTH)
				s = substr(s, RLENGTH + 1)
			} else {
				out = out "\357\277\275"
				s = substr(s, 2)
				bad++
			}
		print out
	}
	END {
		if (bad)
			printf "%s: %s: %d bytes of invalid UTF-8 scored as U+FFFD\n",
			    prog, what, bad > "/dev/stderr"
	}' "$1" >"$2"
}

# stage PROGRAM ARGS...: a stage of a pipeline, its failure noted (sh has
# no pipefail).
stage() {
	"$@" || echo "$1 failed (status $?)" >>"$T/failed"
}

while IFS="$(printf '\t')" read -r name how file <&3; do
	hyp=$out/$name.hyp
	case $how in
	text) cp "$file" "$hyp.tmp" ;;
	greedy | beam)
		echo "$prog: $name: translating $lines sentences ($how)" >&2
		set -- decode
		[ "$how" = beam ] && set -- beam -k "$beam"
		rm -f "$T/failed"
		stage tokenize -m "$file" <"$src" | stage embed -m "$file" |
			stage encode -m "$file" | stage attend -m "$file" |
			stage "$@" -m "$file" >"$hyp.tmp"
		[ ! -s "$T/failed" ] || die "$name: $(cat "$T/failed")"
		;;
	esac
	[ "$(wc -l <"$hyp.tmp")" -eq "$lines" ] ||
		die "$name: $(wc -l <"$hyp.tmp") translations for $lines sentences"
	mv "$hyp.tmp" "$hyp"
	utf8 "$hyp" "$T/hyp"
	split_buckets "$T/hyp" "$T/hyp"
	for b in $(cut -f 1 "$T/ranges"); do
		score "$T/ref.$b" "$T/hyp.$b"
	done >"$T/col.$name"
	score "$ref" "$T/hyp" >>"$T/col.$name"
done 3<"$T/models"

# The table: the buckets' columns, then one column per model.
{
	printf 'bucket\twords\tsentences'
	cut -f 1 "$T/models" | awk '{ printf "\t%s", $0 }'
	echo
	awk -F '\t' -v n="$lines" '{ printf "%d\t%d-%d\t%d\n", $1, $2, $3, $4;
		if (NR == 1 || $2 < lo) lo = $2; if ($3 > hi) hi = $3 }
		END { printf "all\t%d-%d\t%d\n", lo, hi, n }' "$T/ranges" >"$T/rows"
	set --
	for name in $(cut -f 1 "$T/models"); do set -- "$@" "$T/col.$name"; done
	paste "$T/rows" "$@"
} >"$out/table.tsv"

awk -F '\t' '
	{ line = "|"; for (i = 1; i <= NF; i++) line = line " " $i " |"; print line }
	NR == 1 { line = "|"
		for (i = 1; i <= NF; i++) line = line (i == 2 ? " :---: |" : " ---: |")
		print line }' "$out/table.tsv" >"$out/table.md"

awk -f "$here/plot-svg.awk" -v title="$title" \
	-v xlabel="source sentence length (words)" -v ylabel="BLEU" \
	"$out/table.tsv" >"$out/plot.svg"
cat "$out/table.md"
echo "$prog: $nb buckets, $(wc -l <"$T/models") models: $out/table.tsv, $out/table.md, $out/plot.svg" >&2
