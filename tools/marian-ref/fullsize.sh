#!/bin/sh
# fullsize.sh [opus]: attn against native Marian on models of the shapes
# people download (make check-fullsize).  Too large to commit: everything
# is made here, in $FULLSIZE_DIR (default build/fullsize), and kept there
# for the next run.
#
#   opus  An OPUS-MT directory as the Helsinki-NLP release zips unpack:
#         opus.spm32k-spm32k.transformer-align.model1.npz.best-
#         perplexity.npz (a random Transformer-base, tools/marian-ref/
#         fullsize.py), source.spm and target.spm (32,000-piece unigram
#         models trained here by Debian's spm_train on ../shared/data/
#         ui-en-de's English and German), opus.spm32k-spm32k.vocab.yml (the
#         joint vocabulary marian-vocab would write from both sides'
#         pieces: about 60,000 entries) and OPUS-MT's decoder.yml.  Native
#         Marian translates $FULLSIZE_LINES (500) lines of dev.en as
#         OPUS-MT's pipeline runs it (spm_encode, marian-decoder with the
#         decoder.yml's settings, then its postprocessing sed); attn runs
#         examples/marian-import.sh on the directory, with no flag.  Beam
#         (the decoder.yml's) and greedy (-b 1; attn's decode).
#
# Prints, per search, the lines of identical text and of identical ids, and
# each differing line; exits 1 unless every line is identical.  Needs
# native Marian (native.sh), Debian's sentencepiece and python3-numpy.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/marian-ref/native.sh"
marian_native
for t in spm_train spm_encode; do
	command -v $t > /dev/null || {
		echo "fullsize.sh: no $t (apt-get install sentencepiece)" >&2
		exit 1; }
done
/usr/bin/python3 -c 'import numpy' 2> /dev/null || {
	echo "fullsize.sh: no numpy (apt-get install python3-numpy)" >&2
	exit 1; }
PATH=$root/build/bin:$PATH
W=${FULLSIZE_DIR:-$root/build/fullsize}
N=${FULLSIZE_LINES:-500}
DATA=$root/../shared/data/ui-en-de
mkdir -p "$W"
log() { echo "fullsize.sh: $*" >&2; }

# spm MODEL TEXT: a 32,000-piece unigram model with Marian's ids
spm() {
	[ -s "$1.model" ] && return
	log "training $1.model on $2"
	spm_train --input="$2" --model_prefix="$1" --vocab_size=32000 \
		--model_type=unigram --bos_id=-1 --eos_id=0 --unk_id=1 \
		--pad_id=-1 --input_sentence_size=200000 \
		--shuffle_input_sentence=true --num_threads="$(nproc)" \
		--minloglevel=2 > /dev/null 2>&1
}

opus() {
	O=$W/opus-mt-en-de
	M=$O/opus.spm32k-spm32k.transformer-align.model1.npz.best-perplexity.npz
	Y=$O/opus.spm32k-spm32k.vocab.yml
	mkdir -p "$O"
	spm "$W/src" "$DATA/train.en"
	spm "$W/tgt" "$DATA/train.de"
	cp "$W/src.model" "$O/source.spm"
	cp "$W/tgt.model" "$O/target.spm"
	if [ ! -s "$Y" ]; then
		log "the joint vocab.yml"
		{ spm_encode --model="$W/src.model" < "$DATA/train.en"
		  spm_encode --model="$W/tgt.model" < "$DATA/train.de"; } |
			tr ' ' '\n' | grep -v '^$' | LC_ALL=C sort |
			LC_ALL=C uniq -c | LC_ALL=C sort -s -k1,1nr > "$W/counts"
		/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" vocab \
			"$Y" "$W/counts" > "$W/V"
	fi
	V=$(cat "$W/V")
	if [ ! -s "$M" ]; then
		log "a random Transformer-base of $V ids"
		/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" opus \
			"$W" "$V"
		mv "$W/model.npz" "$M"
	fi
	cat > "$O/decoder.yml" <<-EOF
	models:
	  - $(basename "$M")
	vocabs:
	  - $(basename "$Y")
	  - $(basename "$Y")
	beam-size: 6
	normalize: 0.6
	word-penalty: 0
	mini-batch: 1
	maxi-batch: 1
	maxi-batch-sort: src
	relative-paths: true
	EOF
	head -n "$N" "$DATA/dev.en" > "$W/in.en"
	# OPUS-MT's pipeline: spm_encode, Marian, the postprocessing sed
	spm_encode --model="$O/source.spm" < "$W/in.en" > "$W/in.pieces"
	for s in beam greedy; do
		[ $s = greedy ] && b="-b 1" || b=
		log "native Marian, $s"
		# shellcheck disable=SC2086
		(cd "$O" && "$MARIAN_BIN/marian-decoder" -c decoder.yml \
			--cpu-threads "$(nproc)" --quiet $b) \
			< "$W/in.pieces" > "$W/marian.$s.pieces"
		sed 's/ //g;s/▁/ /g;s/^ *//;s/ *$//' "$W/marian.$s.pieces" \
			> "$W/marian.$s"
	done
	log "attn: examples/marian-import.sh"
	rm -f "$W/opus.tsr"
	sh "$root/examples/marian-import.sh" "$O" "$W/opus.tsr" \
		< "$W/in.en" > "$W/attn.beam"
	tokenize -m "$W/opus.tsr" "$W/in.en" | embed -m "$W/opus.tsr" |
		encode -m "$W/opus.tsr" | attend -m "$W/opus.tsr" |
		decode -m "$W/opus.tsr" > "$W/attn.greedy"
	# the pieces source.spm does not know (spm_encode prints their text):
	# OPUS-MT's pipeline finds them in the joint vocab.yml
	unk=$(cut -f1 "$W/src.vocab" | awk 'NR == FNR { known[$0]; next }
		{ for (i = 1; i <= NF; i++) if (!($i in known)) { n++; next } }
		END { print n + 0 }' - "$W/in.pieces")
	echo "opus: $unk of $N lines hold a piece source.spm lacks"
	bad=0
	for s in beam greedy; do
		same=$(paste -d '\n' "$W/marian.$s" "$W/attn.$s" |
			awk 'NR % 2 { a = $0; next } $0 == a { n++ }
			     END { print n + 0 }')
		words=$(tr ' ' '\n' < "$W/attn.$s" | sort -u | wc -l)
		echo "opus $s: $same of $N lines identical ($words distinct" \
		     "words in attn's output)"
		[ "$same" -eq "$N" ] && continue
		bad=1
		paste "$W/marian.$s" "$W/attn.$s" | awk -F '\t' -v s=$s '
			$1 != $2 { print s " line " NR ": marian: " $1
				   print s " line " NR ": attn:   " $2 }' | head -20
	done
	return $bad
}

case ${1:-opus} in
opus) opus ;;
*) echo "usage: fullsize.sh [opus]" >&2; exit 2 ;;
esac
