#!/bin/sh
# fullsize.sh [opus|student]: attn against native Marian on models of the
# shapes people download (make check-fullsize: both).  Too large to
# commit: everything is made here, in $FULLSIZE_DIR (default
# build/fullsize), and kept there for the next run.
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
#   student  A Firefox Translations directory (below, at student()).
#
# Prints, per search, the lines of identical text and each differing line;
# exits 1 unless every line of a float model is identical and at least 98%
# of an int8 one's.  Needs native Marian (native.sh), Debian's
# sentencepiece and python3-numpy.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/marian-ref/native.sh"
marian_native
marian_blas
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

# student: a Firefox Translations directory as Firefox publishes one
# (gzipped; no config, no decoder.yml): vocab.ende.spm.gz (ONE joint
# 32,000-piece model trained on train.en + train.de),
# model.ende.intgemm.alphas.bin.gz (fullsize.py's float student, its
# alphas as Firefox's pipeline makes them: marian-decoder --dump-quantmult
# on a sample, then extract_stats.py's NAME_QuantMultA = 127 / (mean +
# 1.1 std), then marian-conv -g intgemm8) and lex.50.50.ende.s2t.bin.gz
# (the lexical table t(target | source) of attn's align, IBM Model 2 on
# the pieces, written as Marian's text lex.s2t, "target source prob",
# and made binary by marian-conv --shortlist lex.s2t 50 50 0).  Marian
# runs with Firefox's translator-worker settings (beam 1, normalize 1,
# word-penalty 0, max-length-factor 2, int8shiftAlphaAll, skip-cost,
# the shortlist) and --mini-batch 1 (Marian's length limit follows its
# batch's widest source); attn runs examples/marian-import.sh on the
# directory.  Greedy (Firefox's beam 1) and beam 4; then the float
# student (marian-decoder --gemm-precision float32, no shortlist) against
# attn's import of the .npz.
student() {
	S=$W/student			# the plain files: what is made, and runs
	F=$W/firefox-en-de		# the directory as Firefox publishes it
	Z=$S/model.ende.intgemm.alphas.bin
	L=$S/lex.50.50.ende.s2t.bin
	v=$S/vocab.ende.spm
	mkdir -p "$S" "$F"
	if [ ! -s "$v" ]; then
		log "training the joint vocab.ende.spm on train.en + train.de"
		spm_train --input="$DATA/train.en,$DATA/train.de" \
			--model_prefix="$S/joint" --vocab_size=32000 \
			--model_type=unigram --bos_id=-1 --eos_id=0 \
			--unk_id=1 --pad_id=-1 --input_sentence_size=400000 \
			--shuffle_input_sentence=true \
			--num_threads="$(nproc)" --minloglevel=2 \
			> /dev/null 2>&1
		mv "$S/joint.model" "$v"
	fi
	if [ ! -s "$S/lex.s2t" ]; then
		log "the lexical table: align on the pieces"
		for l in en de; do
			spm_encode --model="$v" < "$DATA/train.$l" \
				> "$S/train.$l.pieces"
		done
		align --no-fold -q -t -o "$S/align.tsr" \
			"$S/train.en.pieces" "$S/train.de.pieces"
		tensordump -t "$S/align.tsr" > "$S/align.txt"
		/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" lex \
			"$S/align.txt" "$S/joint.vocab" "$S/lex.s2t"
	fi
	if [ ! -s "$L" ]; then
		log "marian-conv --shortlist"
		"$MARIAN_BIN/marian-conv" --shortlist "$S/lex.s2t" 50 50 0 \
			-V "$v" "$v" -d "$L" > "$S/conv.log" 2>&1
	fi
	if [ ! -s "$S/student.npz" ]; then
		log "a random Firefox student of 32000 ids"
		/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" student \
			"$S" 32000
		mv "$S/model.npz" "$S/student.npz"
	fi
	if [ ! -s "$Z" ]; then
		# Firefox's pipeline (pipeline/quantize/quantize.sh): the
		# float model on a sample with the shortlist, its activations'
		# maxima, extract_stats.py, marian-conv (one thread: the
		# dump's lines are written apart)
		log "the alphas: --dump-quantmult on dev.en 1001-1500"
		sed -n 1001,1500p "$DATA/dev.en" > "$S/sample.en"
		"$MARIAN_BIN/marian-decoder" -m "$S/student.npz" -v "$v" "$v" \
			--shortlist "$L" false -b 1 --cpu-threads 1 \
			--quiet --dump-quantmult < "$S/sample.en" \
			> /dev/null 2> "$S/quantmults"
		/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" alphas \
			"$S/quantmults" "$S/student.npz" "$S/alphas.npz"
		"$MARIAN_BIN/marian-conv" -f "$S/alphas.npz" -t "$Z" \
			-g intgemm8 > "$S/conv.log" 2>&1
	fi
	for f in "$v" "$Z" "$L"; do
		[ -s "$F/$(basename "$f").gz" ] ||
			gzip -9nc "$f" > "$F/$(basename "$f").gz"
	done
	head -n "$N" "$DATA/dev.en" > "$W/in.en"
	fx="-v $v $v --normalize 1.0 --word-penalty 0
	    --max-length-factor 2.0 --mini-batch 1 --maxi-batch 1
	    --cpu-threads $(nproc) --quiet"
	for s in greedy beam float; do
		log "native Marian, student $s"
		case $s in
		greedy) set -- -m "$Z" --gemm-precision int8shiftAlphaAll \
			--skip-cost --shortlist "$L" false --beam-size 1 ;;
		# beam 4 without --skip-cost: with it, Marian's beam adds
		# the raw logits (models::usage::raw, no log-softmax), which
		# attn does not do (Firefox's beam is 1, where it is the same)
		beam) set -- -m "$Z" --gemm-precision int8shiftAlphaAll \
			--shortlist "$L" false --beam-size 4 ;;
		float) set -- -m "$S/student.npz" --gemm-precision float32 \
			--beam-size 1 ;;
		esac
		# shellcheck disable=SC2086
		"$MARIAN_BIN/marian-decoder" $fx "$@" < "$W/in.en" \
			> "$W/marian.student.$s"
	done
	log "attn: examples/marian-import.sh"
	rm -f "$W/student.tsr" "$W/student-float.tsr"
	sh "$root/examples/marian-import.sh" "$F" "$W/student.tsr" \
		< "$W/in.en" > "$W/attn.student.greedy"
	tokenize -m "$W/student.tsr" "$W/in.en" | embed -m "$W/student.tsr" |
		encode -m "$W/student.tsr" | attend -m "$W/student.tsr" |
		beam -k 4 -m "$W/student.tsr" > "$W/attn.student.beam"
	# the float student with the same settings (its length limit)
	printf '%s\n' 'beam-size: 1' 'normalize: 1.0' 'word-penalty: 0' \
		'max-length-factor: 2.0' > "$S/float.yml"
	train-step --import marian -m "$W/student-float.tsr" \
		--decoder-config "$S/float.yml" "$S/student.npz" "$v"
	tokenize -m "$W/student-float.tsr" "$W/in.en" |
		embed -m "$W/student-float.tsr" |
		encode -m "$W/student-float.tsr" |
		attend -m "$W/student-float.tsr" |
		decode -m "$W/student-float.tsr" > "$W/attn.student.float"
	bad=0
	for s in greedy beam float; do
		same=$(paste -d '\n' "$W/marian.student.$s" \
			"$W/attn.student.$s" | awk 'NR % 2 { a = $0; next }
			$0 == a { n++ } END { print n + 0 }')
		words=$(tr ' ' '\n' < "$W/attn.student.$s" | sort -u | wc -l)
		echo "student $s: $same of $N lines identical ($words" \
		     "distinct words in attn's output)"
		[ "$same" -eq "$N" ] && continue
		# int8: 98% is the goal (rounding at the margins)
		[ $s != float ] && [ $((same * 100)) -ge $((N * 98)) ] ||
			bad=1
		paste "$W/marian.student.$s" "$W/attn.student.$s" |
			awk -F '\t' -v s=$s '$1 != $2 {
				print s " line " NR ": marian: " $1
				print s " line " NR ": attn:   " $2 }' | head -20
	done
	return $bad
}

case ${1:-all} in
opus) opus ;;
student) student ;;
all)	# each in a subshell of its own, where set -e still holds (not
	# in an || list, which would suspend it)
	set +e
	(set -e; opus); a=$?
	(set -e; student); b=$?
	exit $((a | b)) ;;
*) echo "usage: fullsize.sh [opus|student]" >&2; exit 2 ;;
esac
