#!/bin/sh
# train-step --export-marian: an attn Transformer as native Marian loads
# it (a directory: model.npz, the vocabularies, decoder.yml).
# - Round trip: tools/marian-ref's four random Marian models (post- and
#   pre-norm, SSRU decoders, tied all and target) imported, exported and
#   imported again give the same model file byte for byte, and the
#   exported .npz holds the original's arrays bit for bit (python3's
#   zipfile); an OPUS-MT-like vocab.yml over an .spm comes back as the
#   same vocab.yml and .spm.
# - Native Marian: tests/fixtures/marian/export/ holds three of those
#   models and two of attn's own (nothing tied, pre-norm; source tied to
#   target, post-norm), fine-tuned by attn and exported
#   (tools/marian-ref/make_export.sh), with what marian-decoder 1.9.56
#   translated with them, greedy and beam 4 (normalize 0.6,
#   max-length-factor 2.5).  (They learn the words of the copy task but
#   not yet to stop: output_rows in transformer_forward.c skips target id
#   0 as padding, and these vocabularies' </s> is 0.)  Imported, they export to the same bytes
#   (so the export is still the one Marian ran), and attn's decode and
#   beam give Marian's text on all 50 lines, log p within 1e-4 nats
#   (Marian prints 6 digits).
# - Refusals by name (arch, attn-bpe, pos, bos_id, ln_eps, pre_kv,
#   int8), each leaving no directory; a write that fails half-way leaves
#   no file; a symbolic link in the way is not replaced.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian
X=$F/export

# same_arrays A.npz B.npz: every array but special:model.yml the same
# bytes and shape ([n] and [1, n] the same), the same names
same_arrays() {
	python3 - "$1" "$2" <<'EOF'
import ast, struct, sys, zipfile
def arrays(path):
    out = {}
    for i in zipfile.ZipFile(path).infolist():
        b = zipfile.ZipFile(path).read(i.filename)
        n = struct.unpack('<H', b[8:10])[0]
        h = ast.literal_eval(b[10:10 + n].decode())
        shape = tuple(h['shape'])
        out[i.filename] = (h['descr'], (1,) + shape if len(shape) == 1 else shape,
                           b[10 + n:])
    return out
a, b = arrays(sys.argv[1]), arrays(sys.argv[2])
bad = sorted(set(a) ^ set(b))
bad += [k for k in a if k in b and k != 'special:model.yml.npy' and a[k] != b[k]]
if bad:
    sys.exit('arrays differ: %s' % bad[:5])
EOF
}
command -v python3 >/dev/null || fail "python3 (its zipfile) is needed"

# round trips
for v in post pre ssru ssru-pre; do
	case $v in
	post) train-step --import marian -m $v.tsr \
		--decoder-config "$F/decoder.yml" "$F/$v.npz" "$F/vocab.spm" ;;
	*) train-step --import marian -m $v.tsr "$F/$v.npz" "$F/vocab.spm" ;;
	esac
	train-step --export-marian $v -m $v.tsr
	[ "$(ls $v | tr '\n' ' ')" = "decoder.yml model.npz vocab.spm " ] ||
		fail "$v: the directory holds $(ls $v)"
	cmp -s $v/vocab.spm "$F/vocab.spm" || fail "$v: vocab.spm changed"
	train-step --import marian -m $v.2.tsr --decoder-config $v/decoder.yml \
		$v/model.npz $v/vocab.spm
	cmp -s $v.tsr $v.2.tsr || fail "$v: the model changed in a round trip"
	same_arrays "$F/$v.npz" $v/model.npz || fail "$v: the arrays changed"
done
# what model.yml says of each
for kv in "post transformer-postprocess: dan" "post tied-embeddings-all: true" \
    "post transformer-ffn-activation: swish" "pre transformer-preprocess: n" \
    "pre transformer-postprocess-top: n" "pre tied-embeddings: true" \
    "pre tied-embeddings-all: false" "ssru transformer-decoder-autoreg: rnn" \
    "ssru dec-cell: ssru" "ssru-pre transformer-ffn-activation: swish"; do
	v=${kv%% *}
	python3 -c "import zipfile, sys; sys.stdout.buffer.write(zipfile.ZipFile('$v/model.npz').read('special:model.yml.npy')[128:])" |
		tr -d '\0' > yml
	grep -qxF "${kv#* }" yml || fail "$v: model.yml lacks '${kv#* }'"
done
grep -qxF "beam-size: 4" post/decoder.yml &&
	grep -qxF "max-length-factor: 2.5" post/decoder.yml &&
	grep -qxF "allow-unk: false" post/decoder.yml ||
	fail "post's decoder.yml: $(cat post/decoder.yml)"

# a vocab.yml over an .spm (text/vocab.h's third kind): the same two back
train-step --import marian -m y.tsr "$F/post.npz" "$F/vocab.yml" \
	"$F/vocab.spm"
train-step --export-marian y -m y.tsr
cmp -s y/vocab.yml "$F/vocab.yml" || fail "vocab.yml: $(diff y/vocab.yml "$F/vocab.yml" | head -3)"
cmp -s y/vocab.spm "$F/vocab.spm" || fail "vocab.yml's .spm changed"
sed -n '/^vocabs:/,/^[a-z]/p' y/decoder.yml | grep -c '^  - vocab.yml$' > n
[ "$(cat n)" = 2 ] || fail "decoder.yml's vocabs: $(cat y/decoder.yml)"
train-step --import marian -m y.2.tsr --decoder-config y/decoder.yml \
	y/model.npz y/vocab.yml y/vocab.spm
cmp -s y.tsr y.2.tsr || fail "the vocab.yml model changed in a round trip"
# exporting again replaces the files
train-step --export-marian y -m y.tsr || fail "a second export"

# native Marian's translations of the committed exports
n=$(wc -l < "$X/input.txt")
[ "$n" -eq 50 ] || fail "input.txt has $n lines"
for v in post pre ssru-pre none-pre src-post; do
	train-step --import marian -m n$v.tsr --decoder-config "$F/decoder.yml" \
		"$X/$v.npz" "$F/vocab.spm"
	train-step --export-marian n$v -m n$v.tsr
	cmp -s n$v/model.npz "$X/$v.npz" ||
		fail "$v: the export is not the one Marian translated with"
	tokenize -m n$v.tsr "$X/input.txt" | stages n$v.tsr > mem
	decode -m n$v.tsr --scores < mem | sed 's/ ||| / ||| F0= /' > got.b1
	beam -m n$v.tsr -k 4 -n 1 < mem | sed 's/^[0-9]* ||| //' > got.b4
	for b in b1 b4; do
		[ "$(wc -l < got.$b)" -eq "$n" ] || fail "$v $b: lines"
		paste -d '\n' got.$b "$X/$v.$b" | awk -F ' [|][|][|] F0= ' -v w="$v $b" '
			NR % 2 { t = $1; s = $2 + 0; next }
			{ d = s - $2; if (d < 0) d = -d }
			$1 != t { print w ": line " NR / 2 ": " t " | Marian: " $1; bad++ }
			d > 1e-4 { print w ": line " NR / 2 ": log p " s " | Marian: " $2; bad++ }
			{ same += $1 == t }
			END { if (same != NR / 2) print w ": " same " of " NR / 2 " lines as Marian"
			      exit bad > 0 }' || fail "$v $b: not Marian's translations"
	done
done

# refusals, by name, leaving no directory
perro_model rnn.tsr
exits 1 train-step --export-marian d -m rnn.tsr
err_has "arch=rnnsearch: only a Transformer"
new_model bpe.tsr transformer vocab vocab pos=marian ln_eps=1e-6
exits 1 train-step --export-marian d -m bpe.tsr
err_has "the source vocabulary is attn-bpe's, which Marian cannot read"
S=$F/vocab.spm
new_model sin.tsr transformer "$S" "$S" ln_eps=1e-6 norm=post
exits 1 train-step --export-marian d -m sin.tsr
err_has "pos=sinusoidal: Marian's positions are its own"
new_model eps.tsr transformer "$S" "$S" pos=marian norm=post
exits 1 train-step --export-marian d -m eps.tsr
err_has "ln_eps=1e-05: Marian's layer norm adds 1e-6"
new_model kv.tsr transformer "$S" "$S" pos=marian ln_eps=1e-6 norm=pre
exits 1 train-step --export-marian d -m kv.tsr
err_has "norm=pre with pre_kv=norm"
new_model bos.tsr transformer "$root/tests/fixtures/spm/bpe_id_300.model" \
	"$root/tests/fixtures/spm/bpe_id_300.model" pos=marian ln_eps=1e-6 \
	norm=post
exits 1 train-step --export-marian d -m bos.tsr
err_has "bos_id=1: Marian's decoder starts from a zero vector"
train-step -x i8.tsr --dtype int8 -m post.tsr
exits 1 train-step --export-marian d -m i8.tsr
err_has "an int8 export"
[ ! -e d ] || fail "a refused export left $(ls -d d*)"
# these settings export (pre_kv=input; a fresh model's own vocabulary)
new_model ok.tsr transformer "$S" "$S" pos=marian ln_eps=1e-6 norm=pre \
	pre_kv=input
train-step --export-marian ok -m ok.tsr || fail "a fresh model's export"
exits 2 train-step --export-marian d -m ok.tsr extra
err_has "--export-marian takes only -m MODEL"

# all or none: decoder.yml, the last file, cannot be written (a
# directory is in its place): no model.npz, no temporary file
mkdir -p half/decoder.yml
exits 1 train-step --export-marian half -m post.tsr
err_has "decoder.yml exists and is not a regular file"
[ "$(ls -A half)" = decoder.yml ] || fail "a failed export left $(ls -A half)"
# a symbolic link in the way is not replaced, nor what it points to
mkdir ln
echo keep > target
ln -s ../target ln/model.npz
exits 1 train-step --export-marian ln -m post.tsr
err_has "model.npz exists and is not a regular file"
[ "$(cat target)" = keep ] && [ -L ln/model.npz ] ||
	fail "the link or its target changed"
[ "$(ls -A ln)" = model.npz ] || fail "a refused export left $(ls -A ln)"
exit 0
