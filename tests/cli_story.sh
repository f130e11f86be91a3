#!/bin/sh
# examples/story.sh on a tiny corpus (reversing and upper-casing two-letter
# words) with tiny recurrent models, 3 s of training each: rnnencdec,
# diagonal and additive (the Transformer's recipe is too large for a
# test); a variant train-step refuses (here a wrapper refusing rnnencdec
# as an unknown architecture, exit 2) is skipped with a message; the
# table has a row per variant made with its updates, seconds and BLEU;
# the length plot a line per variant, the attention figure a picture per
# attending variant; a second run trains nothing and keeps the models; a
# run stopped 2 s short resumes and trains only them; a train-step that
# ends before its limit stops the run untranslated; an unknown variant
# name is a usage error.
set -eu
. "$(dirname "$0")/lib/cli.sh"

mkdir data
sentences 3 220 1 4 "s R" > all.txt
head -n 200 all.txt | cut -f1 > data/train.es
head -n 200 all.txt | cut -f2 > data/train.en
tail -n 20 all.txt | cut -f1 > data/dev.es
tail -n 20 all.txt | cut -f2 > data/dev.en
export DATA=data DOC=doc TRAIN_TIME=3 VOCAB=300 K=2 SAVE=5 VERSE=2
export EMB=8 HIDDEN=8 ATT=8 MAXOUT=4 BATCH=100
export VARIANTS="rnnencdec diagonal additive"
story() { sh "$root/examples/story.sh" "$@"; }
steps() {
	tensordump -n model.config -t "run/$1/model.tsr" |
		sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p'
}

real=$(command -v train-step)
mkdir bin
cat > bin/train-step <<END
#!/bin/sh
case " \$* " in
*" -a rnnencdec "*)
	echo "train-step: --arch: unknown architecture 'rnnencdec'" >&2
	exit 2 ;;
esac
exec "$real" "\$@"
END
chmod +x bin/train-step
PATH=$T/bin:$PATH story run > out 2> err || fail "status $?: $(cat err)"
grep -q "^story.sh: rnnencdec: skipped, this train-step cannot make it: .*unknown architecture 'rnnencdec'" err ||
	fail "no message for the skipped variant: $(cat err)"
[ ! -e run/rnnencdec/model.tsr ] || fail "a skipped variant has a model"

# the table: a header, a rule, a row per variant made
cmp -s out run/story.md || fail "the table printed is not story.md"
[ "$(wc -l < run/story.md)" -eq 4 ] || fail "not 2 rows: $(cat run/story.md)"
for v in diagonal additive; do
	n=$(steps $v)
	awk -F ' *[|] *' -v v=$v -v n="$n" '$2 == v {
		ok = $3 == "rnnsearch" && $4 == n && n > 0 && $5 >= 3 &&
		    $5 < 60 && $6 > 0 && $7 ~ /^[0-9.]+$/ && $8 ~ /^[0-9.]+$/ }
		END { exit !ok }' run/story.md ||
		fail "$v: row not as made ($n updates): $(cat run/story.md)"
	[ "$(wc -l < run/$v/dev.beam.en)" -eq 20 ] ||
		fail "$v: not 20 beam translations"
done

# the figures
[ "$(grep -c '<polyline' doc/story-length.svg)" -eq 2 ] ||
	fail "story-length.svg: not a line per variant"
[ "$(grep -c '<g transform="translate(' doc/story-attention.svg)" -eq 2 ] ||
	fail "story-attention.svg: not a picture per attending variant"
grep -q '>diagonal (dev line 2)<' doc/story-attention.svg ||
	fail "story-attention.svg: diagonal not named"
[ "$(grep -c '<svg' doc/story-attention.svg)" -eq 1 ] ||
	fail "story-attention.svg: not one picture"

# again: nothing trained; 2 s short: those 2 s only
VARIANTS="diagonal additive" story run > /dev/null 2> err2 ||
	fail "second run: status $?"
grep -q training err2 && fail "second run trained: $(cat err2)"
before=$(steps additive)
rm run/additive/trained.done
echo 1 > run/additive/trained.s
VARIANTS="diagonal additive" story run > /dev/null 2> err3 ||
	fail "third run: status $?"
grep -q "^story.sh: additive: training for 2 s (1 s done)" err3 ||
	fail "resume: $(cat err3)"
grep -q "diagonal: training" err3 && fail "diagonal trained again"
[ "$(steps additive)" -gt "$before" ] || fail "resume: no updates"
[ -e run/additive/trained.done ] || fail "resume: not done"
[ "$(cat run/additive/trained.s)" -ge 3 ] ||
	fail "resume: $(cat run/additive/trained.s) s in all, not 3 or more"

# a train-step stopped by a signal sent to it alone saves and exits 0
# before its limit: the run stops, with the time so far, and translates
# nothing
mkdir stopped
cat > stopped/train-step <<END
#!/bin/sh
case " \$* " in *" -T "*) exit 0 ;; esac
exec "$real" "\$@"
END
chmod +x stopped/train-step
rm run/additive/trained.done
echo 1 > run/additive/trained.s
rc=0
VARIANTS="additive" PATH=$T/stopped:$PATH story run > /dev/null 2> err5 ||
	rc=$?
[ "$rc" -eq 130 ] || fail "stopped train-step: status $rc: $(cat err5)"
grep -q "^story.sh: additive: stopped at [12] s of 3; run it again" err5 ||
	fail "stopped train-step: $(cat err5)"
grep -q translating err5 && fail "a stopped run translated: $(cat err5)"

rc=0
VARIANTS="additive nonesuch" story run > /dev/null 2> err4 || rc=$?
[ "$rc" -eq 2 ] || fail "an unknown variant: status $rc"
grep -q "nonesuch: no such variant" err4 || fail "$(cat err4)"
exit 0
