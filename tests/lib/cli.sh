# tests/lib/cli.sh: the preamble of the command-line tests, sourced after
# their `set` line (tests/run.sh runs them with sh from any directory):
#
#	. "$(dirname "$0")/lib/cli.sh"
#
# It sets root (the source tree), name (the test's, e.g. cli_export) and
# T, a new temporary directory, made the working directory and removed on
# exit, after the processes whose ids the test put in pids are killed.
# Then the small corpora and models several tests share.

root=$(cd "$(dirname "$0")/.." && pwd)
name=$(basename "$0" .sh)
T=$(mktemp -d) || exit 1
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
cd "$T" || exit 1

# fail MESSAGE: "NAME: MESSAGE" on stderr, and exit 1; a test that counts
# its errors instead (errors=0 after sourcing this, and its own exit
# status from them at the end) goes on.
fail() {
	echo "$name: $*" >&2
	[ -n "${errors-}" ] || exit 1
	errors=$((errors + 1))
}

# sentences SEED N MIN MAX FIELDS [WORDS]: N lines of MIN to MAX words
# drawn from WORDS (default "ab cd ef gh ij kl mn op") by awk's
# srand(SEED), each line the tab-separated FIELDS: "s" the words, "r" the
# same reversed, "R" reversed and upper-cased (FIELDS "s r": pairs that
# reverse, "s s": pairs that copy).
sentences() {
	awk -v seed="$1" -v n="$2" -v min="$3" -v max="$4" -v fields="$5" \
	    -v words="${6:-ab cd ef gh ij kl mn op}" 'BEGIN {
		srand(seed); nw = split(words, w, " ")
		nf = split(fields, f, " ")
		for (i = 0; i < n; i++) {
			k = min + int(rand() * (max - min + 1))
			v["s"] = v["r"] = v["R"] = ""
			for (j = 0; j < k; j++) {
				x = w[1 + int(rand() * nw)]
				v["s"] = v["s"] (j ? " " : "") x
				v["r"] = x (j ? " " : "") v["r"]
				v["R"] = toupper(x) (j ? " " : "") v["R"]
			}
			s = v[f[1]]
			for (j = 2; j <= nf; j++)
				s = s "\t" v[f[j]]
			print s
		}
	}'
}

# perro_corpus: 20 lines of one Spanish sentence (to learn a vocabulary
# of 300 from).
perro_corpus() {
	_i=0
	while [ $_i -lt 20 ]; do
		echo "el perro come la comida del perro y el gato come"
		_i=$((_i + 1))
	done
}

# perro_model MODEL [SETTING...]: corpus, perro_corpus; vocab, 300 units
# learned from it; MODEL, new_model's rnnsearch with vocab both sides.
perro_model() {
	_pm=$1
	shift
	perro_corpus > corpus
	tokenize -l 300 corpus > vocab 2>/dev/null &&
		new_model "$_pm" rnnsearch vocab vocab "$@"
}

# casa_pairs N LEN WORDS: N Spanish-English pairs, line i (from 0) of
# 2 + i % LEN words of the first WORDS (at most 12) of a little
# dictionary, its word j (from 0) the dictionary's 1 + (i * 7 + j * 5) %
# WORDS'th.
casa_pairs() {
	awk -v n="$1" -v len="$2" -v nw="$3" 'BEGIN {
		split("la casa verde el perro come pan y agua mesa gato " \
		      "negro", s, " ")
		split("the house green the dog eats bread and water table " \
		      "cat black", t, " ")
		for (i = 0; i < n; i++) {
			k = 2 + i % len; a = ""; b = ""
			for (j = 0; j < k; j++) {
				x = 1 + (i * 7 + j * 5) % nw
				a = a (j ? " " : "") s[x]; b = b (j ? " " : "") t[x]
			}
			print a "\t" b
		}
	}'
}

# new_model MODEL ARCH SRC TGT [SETTING...]: train-step --init of a tiny
# model of ARCH (rnnsearch: emb, hidden and att 8, maxout 4; rnnencdec
# the same without att; transformer: d_model 16, 2 heads, ffn 32, one
# layer each side) with the vocabularies SRC and TGT; each SETTING
# (KEY=VALUE) is passed with -S after those, so it overrides them.
new_model() {
	_nm=$1 _na=$2 _ns=$3 _nt=$4
	shift 4
	case $_na in
	rnnsearch) set -- emb=8 hidden=8 att=8 maxout=4 "$@" ;;
	rnnencdec) set -- emb=8 hidden=8 maxout=4 "$@" ;;
	transformer) set -- d_model=16 heads=2 ffn=32 enc_layers=1 \
		dec_layers=1 "$@" ;;
	esac
	for _nkv; do
		set -- "$@" -S "$_nkv"
		shift
	done
	train-step -i -m "$_nm" -a "$_na" -s "$_ns" -t "$_nt" "$@"
}

# stages MODEL [OPTION...]: tokenized frames on stdin through embed,
# encode and attend of MODEL, each given the OPTIONs.
stages() {
	_sm=$1
	shift
	embed -m "$_sm" "$@" | encode -m "$_sm" "$@" | attend -m "$_sm" "$@"
}

# trained MODEL PAIRS STEPS [SETTING...]: src.txt, the sources of the
# tab-separated PAIRS; vocab, 280 units learned from them; MODEL, a tiny
# Transformer (new_model; tie=all warmup=20 batch_tokens=200, then the
# SETTINGs) trained STEPS updates on pairs.tsr, PAIRS as frames.
trained() {
	_tm=$1 _tp=$2 _tn=$3
	shift 3
	cut -f1 "$_tp" > src.txt
	tokenize -l 280 src.txt > vocab 2>/dev/null &&
		new_model "$_tm" transformer vocab vocab tie=all warmup=20 \
			batch_tokens=200 "$@" &&
		tokenize -p -m "$_tm" "$_tp" > pairs.tsr &&
		train-step -q -m "$_tm" -n "$_tn" pairs.tsr ||
		fail "a trained Transformer: status $?"
}

# exits STATUS CMD...: runs CMD, its standard output into out and its
# standard error into err; fails unless it exits with STATUS (under set -e
# too).
exits() {
	_want=$1
	shift
	_got=0
	"$@" >out 2>err || _got=$?
	[ "$_got" -eq "$_want" ] ||
		fail "$* exited $_got, not $_want: $(cat err)"
}
# err_has TEXT: the standard error of the last `exits` holds TEXT.
err_has() {
	grep -qF -- "$1" err || fail "stderr lacks '$1': $(cat err)"
}
# hyp_scores MODEL MEMORY [OPTION...]: decode's hyp.score of every frame
# of MEMORY, one a line (tensordump prints a value on the line after its
# record's), with decode's OPTIONs.
hyp_scores() {
	_m=$1 _mem=$2
	shift 2
	decode -m "$_m" -t "$@" < "$_mem" | tensordump -H -n hyp.score -v |
		awk 'NR % 2 == 0'
}
