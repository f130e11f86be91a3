# shellcheck shell=sh
# int8_runs.sh, sourced by make_int8.sh and int8_modes.sh: the runs of
# native Marian that tests/cli_marian_int8.sh checks.  int8_runs DIR OUT
# translates with DIR's students into OUT/{alphas,noalphas}.{greedy,beam,
# scores} (greedy, beam 4, greedy's sentence scores; without alphas one
# sentence a batch, as its multipliers are per call) and with the alphas
# file under DIR/lex.bin into OUT/lex.{greedy,scores}.  The caller
# defines dec: marian-decoder with its vocabularies and input.

# the sentence scores of marian-decoder --n-best
int8_scores() {
	dec "$@" --n-best | awk -F ' [|][|][|] ' '{ print $4 }'
}

int8_runs() {
	_dir=$1 _out=$2
	for _k in alphas noalphas; do
		case $_k in
		alphas) set -- -m "$_dir/student.intgemm8.alphas.bin" \
			--gemm-precision int8shiftAlphaAll ;;
		*) set -- -m "$_dir/student.intgemm8.bin" --gemm-precision \
			int8shiftAll --mini-batch 1 --maxi-batch 1 ;;
		esac
		dec "$@" -b 1 > "$_out/$_k.greedy"
		dec "$@" -b 4 --normalize 0 > "$_out/$_k.beam"
		int8_scores "$@" -b 1 > "$_out/$_k.scores"
	done
	set -- -m "$_dir/student.intgemm8.alphas.bin" --gemm-precision \
		int8shiftAlphaAll --shortlist "$_dir/lex.bin" false -b 1
	dec "$@" > "$_out/lex.greedy"
	int8_scores "$@" > "$_out/lex.scores"
}
