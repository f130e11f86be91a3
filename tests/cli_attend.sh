#!/bin/sh
# attend without a model: out = softmax(q k^T / sqrt(d) + mask) v and,
# with -w, the weights, against values computed here in awk for two small
# frames (2 queries, 3 keys, d 2; the second with 2 heads and a mask of
# -inf and finite entries, one row wholly masked: zeros); the same with
# --act relu and gelu, --no-norm and --scale (a leaky relu fails it, as
# does normalising under --no-norm); the same for every instruction set,
# with -w (the reference) and without; shapes that disagree refused (exit
# 1, the frame named); -w with -m a usage error (exit 2).
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

# The frames, in the text form (mode "in") or the wanted out and weights
# of each frame, one value a line (mode "want").
cat >"$T/frames.awk" <<'END'
function vals(x, n,   i, s) {
	s = ""
	for (i = 0; i < n; i++)
		s = s (i ? " " : "") x[i]
	return s
}
# erf by Abramowitz and Stegun 7.1.26 (to 1.5e-7), awk having none
function erf(x,   t, y) {
	t = 1 / (1 + 0.3275911 * (x < 0 ? -x : x))
	y = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + \
	    t * (-1.453152027 + t * 1.061405429)))) * exp(-x * x)
	return x < 0 ? -y : y
}
BEGIN {
	# frame 0: one head, no mask
	nh[0] = 1; split("1 0 0 1", q0); split("1 0 0 1 1 1", k0)
	split("1 2 3 4 5 6", v0)
	# frame 1: two heads, a mask shared by both
	nh[1] = 2; split("1 0 0 1 0.5 -1 2 0.25", q1)
	split("1 0 0 1 1 1 -1 2 0.5 0.5 3 -2", k1)
	split("1 2 3 4 5 6 -1 0 0 1 2 -3", v1)
	split("0 -inf 0.5 -inf -inf -inf", m1)
	T = 2; S = 3; d = 2
	for (f = 0; f < 2; f++) {
		for (i = 0; i < nh[f] * T * d; i++)
			q[i] = f ? q1[i + 1] : q0[i + 1]
		for (i = 0; i < nh[f] * S * d; i++) {
			k[i] = f ? k1[i + 1] : k0[i + 1]
			v[i] = f ? v1[i + 1] : v0[i + 1]
		}
		for (i = 0; i < T * S; i++)
			m[i] = f ? m1[i + 1] : 0
		H = nh[f]
		if (mode == "in") {
			print "record q f32 [" H "," T "," d "]"
			print vals(q, H * T * d)
			print "record k f32 [" H "," S "," d "]"
			print vals(k, H * S * d)
			print "record v f32 [" H "," S "," d "]" (f ? "" : " end")
			print vals(v, H * S * d)
			if (f) {
				print "record mask f32 [" T "," S "] end"
				print vals(m, T * S)
			}
			continue
		}
		for (h = 0; h < H; h++)
		for (t = 0; t < T; t++) {
			mx = "none"
			for (j = 0; j < S; j++) {
				s[j] = 0
				for (c = 0; c < d; c++)
					s[j] += q[(h * T + t) * d + c] * \
						k[(h * S + j) * d + c]
				sc = scale == "" ? 1 / sqrt(d) : scale
				ok[j] = m[t * S + j] != "-inf"
				s[j] *= sc
				if (ok[j]) {
					s[j] += m[t * S + j]
					if (mx == "none" || s[j] > mx)
						mx = s[j]
				}
			}
			# the weights, before normalisation (exp(s - mx) for
			# the softmax, whose constant factor goes with it)
			sum = 0
			for (j = 0; j < S; j++) {
				x = s[j]
				p[j] = !ok[j] ? 0 : act == "relu" ? (x > 0 ? x : 0) : \
				       act == "gelu" ? x * (1 + erf(x / sqrt(2))) / 2 : \
				       exp(x - mx)
				sum += p[j]
			}
			# fac: the factor of the weights
			nn = act == "softmax" ? exp(mx) : 1
			fac = !nonorm ? (sum != 0 ? 1 / sum : 0) : nn
			for (c = 0; c < d; c++) {
				o = 0
				for (j = 0; j < S; j++)
					o += p[j] * fac * v[(h * S + j) * d + c]
				out[f] = out[f] sprintf("%.9g\n", o)
			}
			for (j = 0; j < S; j++)
				w[f] = w[f] sprintf("%.9g\n",
					p[j] * fac)
		}
	}
	for (f = 0; f < 2; f++)
		printf "%s%s", out[f], mode == "want" ? w[f] : ""
}
END
awk -v mode=in -f "$T/frames.awk" >"$T/in.txt"
tensordump -r "$T/in.txt" >"$T/in.tsr" || fail "tensordump -r: status $?"

# The values of the records out and weights, frame by frame, one a line.
values() {
	tensordump -H -n out -n weights -vall |
		awk 'NR % 2 == 0 { for (i = 1; i <= NF; i++) print $i }'
}

# within 1e-6 relative (the values are at most 30; float's rounding,
# 6e-8 relative, a few times; awk's erf, 1.5e-7)
same() {
	paste "$1" "$2" | awk -v k="$3" '
		{ d = $1 - $2; if (d < 0) d = -d; a = $2 < 0 ? -$2 : $2
		  if (d > 1e-6 * (a > 1 ? a : 1) || ($1 == 0) != ($2 == 0)) {
			print "cli_attend: " k ": value " NR ": got " $1 \
			      ", want " $2; bad = 1 } }
		END { exit bad }' >&2 || fail "$3: values differ"
	[ -s "$2" ] || fail "$3: nothing to compare with"
	[ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] ||
		fail "$3: $(wc -l <"$1") values, want $(wc -l <"$2")"
}

# -w: the reference does the rows, weights and all; without, each
# instruction set's kernel
for o in "" "--act relu" "--act relu --no-norm" "--act gelu" \
	 "--act gelu --no-norm --scale 0.7" "--no-norm" \
	 "--act softmax --scale=-1.5" "--act relu --no-norm -s 1"; do
	set -- $o
	act=softmax nonorm=0 scale=
	while [ $# -gt 0 ]; do
		case $1 in
		--act) act=$2; shift ;;
		--no-norm) nonorm=1 ;;
		--scale=*) scale=${1#--scale=} ;;
		--scale | -s) scale=$2; shift ;;
		esac
		shift
	done
	for m in want wantout; do
		awk -v mode=$m -v act=$act -v nonorm=$nonorm -v scale="$scale" \
			-f "$T/frames.awk" >"$T/$m"
	done
	for k in reference avx2 avx512; do
		# shellcheck disable=SC2086
		ATTN_KERNELS=$k attend -w $o <"$T/in.tsr" >"$T/out.tsr" ||
			fail "$k $o: status $?"
		values <"$T/out.tsr" >"$T/got"
		same "$T/got" "$T/want" "$k -w $o"
		# without -w, out alone
		# shellcheck disable=SC2086
		ATTN_KERNELS=$k attend $o <"$T/in.tsr" >"$T/out2.tsr" ||
			fail "$k $o: no -w: status $?"
		tensordump -H -n weights "$T/out2.tsr" | grep -q . &&
			fail "$k $o: weights without -w"
		values <"$T/out2.tsr" >"$T/got"
		same "$T/got" "$T/wantout" "$k $o"
	done
done

# Refusals: exit 1 naming the frame, or 2 for a usage error.
refusal() {
	tensordump -r >"$T/bad.tsr"
	attend <"$T/bad.tsr" >/dev/null 2>"$T/err"
	echo "$?: $(cat "$T/err")"
}
qk='record q f32 [1,2,2]\n1 2 3 4\nrecord k f32 [1,3,2]\n1 2 3 4 5 6\n'
r=$(printf "$qk"'record v f32 [1,2,2] end\n1 2 3 4\n' | refusal)
case $r in "1: attend: frame 0: q [H, T, d], k and v [H, S, d] disagree") ;;
*) fail "k and v of other shapes: $r" ;; esac
r=$(printf "$qk"'record v f32 [1,3,2]\n1 2 3 4 5 6\nrecord mask f32 [3,2] end
0 0 0 0 0 0\n' | refusal)
case $r in "1: attend: frame 0: mask is not f32 [T, S] = [2, 3]") ;;
*) fail "a mask [S, T]: $r" ;; esac
attend -w -m model.tsr </dev/null >/dev/null 2>&1
[ $? -eq 2 ] || fail "-w with -m: not exit 2"

# Without -w no weights are kept (issue 16, item 6): T = S = 8192, d = 1,
# 96 KB in, whose weights would take 256 MiB, run within 100 MB (ulimit
# -v, or ASan's RSS limit); q = k = 0 makes every weight 1/S, so out is
# the mean of v: 1 for v all 1.
{
	echo 'tsr-text 1'
	for r in q k v; do
		echo "record $r f32 [1,8192,1]"
		awk -v x=$([ $r = v ] && echo 1 || echo 0) 'BEGIN {
			for (i = 0; i < 8192; i++) print x }'
	done
} | tensordump -r >"$T/big.tsr" || fail "tensordump -r"
lim=
(ulimit -v 100000 && attend --version) >/dev/null 2>&1 &&
	lim="ulimit -v 100000;"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=100" \
	sh -c "$lim attend --threads 1 <'$T/big.tsr' >'$T/big.out'" ||
	fail "attend without -w took over 100 MB"
tensordump -H -s -n out "$T/big.out" >"$T/stats" 2>&1
[ "$(awk '{ print $8, $9 }' "$T/stats")" = "1 1" ] ||
	fail "out is not the mean of v: $(cat "$T/stats")"

exit $((errors > 0))
