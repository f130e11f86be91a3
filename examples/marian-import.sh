#!/bin/sh
# marian-import.sh DIR [OUT.tsr]: turns a downloaded Marian model
# directory into an attn model, then translates standard input with it
# if there is any (text in, text out), as native Marian would with that
# directory's settings.  The files it looks for, as the published models
# name them (each may be gzipped, as Firefox's are):
#   OPUS-MT (a zip from the Helsinki-NLP release pages, unpacked):
#     *.npz (the parameters), *.vocab.yml (the ids), source.spm and
#     target.spm (how text is cut), decoder.yml (beam size, length
#     penalty, length factor);
#   Firefox Translations (a folder of its models, or Bergamot's students):
#     model.*.bin (Marian's .bin: float, or int8 "intgemm" with or
#     without alphas), lex.*.s2t.bin or lex.s2t (the lexical shortlist),
#     vocab.*.spm, or srcvocab.*.spm and trgvocab.*.spm, and a config*.yml
#     if there is one; without one, Firefox's own settings (its translator
#     worker's: beam-size 1, normalize 1.0, max-length-factor 2.0,
#     gemm-precision int8shiftAlphaAll, and the shortlist).
# Example:
#   examples/marian-import.sh opus-mt-es-en es-en.tsr < in.es > out.en
set -eu
prog=marian-import.sh
usage() { echo "usage: $prog DIR [OUT.tsr]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
dir=$1
[ -d "$dir" ] || { echo "$prog: $dir: no such directory" >&2; exit 1; }
out=${2:-$(basename "$dir").tsr}

# the gzipped files unpacked, in a folder of our own
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/*.gz; do
	[ -f "$f" ] || continue
	gzip -dc "$f" > "$tmp/$(basename "${f%.gz}")" ||
		{ echo "$prog: $f: not a gzip file" >&2; exit 1; }
done

one() {	# one PATTERN...: the single file that matches, or nothing
	for p; do
		m=
		for f in "$dir"/$p "$tmp"/$p; do
			[ -e "$f" ] || continue
			[ -z "$m" ] || { echo "$prog: $dir: more than one file" \
				"matches $p" >&2; exit 1; }
			m=$f
		done
		[ -z "$m" ] || { echo "$m"; return; }
	done
}

model=$(one '*.npz' 'model*.bin')
[ -n "$model" ] || { echo "$prog: $dir: no *.npz or model*.bin" >&2; exit 1; }
yml=$(one '*.vocab.yml' 'vocab.yml')
src=$(one source.spm 'srcvocab*.spm')
tgt=$(one target.spm 'trgvocab*.spm')
shared=$(one 'vocab*.spm')
cfg=$(one decoder.yml 'config*.yml')
lex=$(one 'lex*.s2t.bin' 'lex*.bin' 'lex*.s2t')

if [ -n "$yml" ]; then		# OPUS-MT: ids from the yml, cut by the .spm
	set -- "$yml" ${src:+"$src"} ${tgt:+"$tgt"}
elif [ -n "$src" ] && [ -n "$tgt" ]; then
	set -- "$src" "$tgt"
elif [ -n "$shared" ]; then
	set -- "$shared"
else
	echo "$prog: $dir: no vocabulary (*.vocab.yml, source.spm," \
	     "vocab*.spm)" >&2
	exit 1
fi

# The shortlist's numbers: a config's "shortlist: [file, first, best,
# threshold]" (block or flow list), else for a text table the FIRST and
# BEST its name gives (lex.50.50...) and threshold 0; a binary one has
# them inside.
lexarg=
if [ -n "$lex" ]; then
	lexarg=$lex
	nums=
	[ -n "$cfg" ] && nums=$(awk '
		/^shortlist:/ { on = 1; sub(/^shortlist:[ \t]*/, "")
			gsub(/[][,]/, " "); n = split($0, a, " ")
			for (i = 2; i <= n; i++) s = s "," a[i]; next }
		on && /^[ \t]*- / { if (++k > 1) { v = $0
			sub(/^[ \t]*- */, "", v); s = s "," v }; next }
		{ on = 0 }
		END { print s }' "$cfg")
	case $nums in ,false*|,true*) nums= ;; esac
	if [ -z "$nums" ] && [ "${lex%.bin}" = "$lex" ]; then
		nums=$(basename "$lex" | sed -n \
			's/^lex\.\([0-9][0-9]*\)\.\([0-9][0-9]*\)\..*/,\1,\2,0/p')
	fi
	lexarg=$lex$nums
fi

# Firefox publishes no configuration: its translator worker's settings
# (int8shiftAlphaAll for its int8 models, which have the alphas)
if [ -z "$cfg" ] && [ -n "$lex" ] && [ -z "$yml" ]; then
	cfg=$tmp/firefox.yml
	case $(basename "$model") in
	*intgemm*alphas*) g=int8shiftAlphaAll ;;
	*intgemm*) g=int8shiftAll ;;
	*) g=float32 ;;
	esac
	printf '%s\n' 'beam-size: 1' 'normalize: 1.0' 'word-penalty: 0' \
		'max-length-factor: 2.0' "gemm-precision: $g" > "$cfg"
	echo "$prog: $dir: no configuration: Firefox Translations' settings" \
	     "(beam-size 1, normalize 1.0, max-length-factor 2.0, $g)" >&2
fi

train-step --import marian -m "$out" ${cfg:+--decoder-config "$cfg"} \
	${lexarg:+--lex "$lexarg"} "$model" "$@"
echo "$prog: $out: made from $(basename "$model")" >&2

if [ ! -t 0 ]; then
	tokenize -m "$out" | embed -m "$out" | encode -m "$out" |
		attend -m "$out" | beam -m "$out"
fi
