#!/bin/sh
# The programs' number options, parsed by cmd/common/opt.c: a bad value
# is a usage error (exit 2) with "PROG: option OPT: 'VALUE' ..." on stderr
# (values out of range, signs, spaces, trailing text, empty); good values
# at the ends of a range pass the parser.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

# refused OPTION VALUE PROG ARGS...: PROG ARGS exits 2 naming the option
# and the value
refused() {
	o=$1 v=$2
	shift 2
	"$@" </dev/null >/dev/null 2>"$T/err"
	s=$?
	[ $s -eq 2 ] || fail "$*: exit $s, not 2"
	head -1 "$T/err" | grep -qF "$1: option $o: '$v' is " ||
		fail "$*: message '$(head -1 "$T/err")'"
}

for v in 0 -3 +3 ' 3' 3x '' 99999999999; do
	refused --batch "$v" embed -m m.tsr -b "$v"
	refused --beam "$v" beam -m m.tsr -k "$v"
	refused --steps "$v" train-step -m m.tsr -n "$v"
done
for v in 10 -1 x; do
	refused --zlib "$v" tensordump -r -z "$v"
done
refused --frame 2x tensordump -f 2x
refused --frame y tensordump -f 1-y
refused --learn 259 tokenize -l 259
refused --learn 16777217 tokenize -l 16777217
refused -w 18 bleu -w 18 ref
refused --alpha 1y beam -m m.tsr --alpha 1y
refused --coverage 0 tokenize -l 300 -c 0
refused --matmul f16 decode -m m.tsr --matmul f16
# the bounds that keep 16 x batch frames and k x k candidates in range
refused --batch 65537 decode -m m.tsr -b 65537
refused --beam 1001 beam -m m.tsr -k 1001
refused --max-len-a nan decode -m m.tsr -a nan

# In range: past the parser, on to the next error (the model is missing:
# exit 1) or to work.
embed -m missing.tsr -b 65536 </dev/null >/dev/null 2>&1
[ $? -eq 1 ] || fail "-b 65536 refused"
beam -m missing.tsr -k 1000 </dev/null >/dev/null 2>&1
[ $? -eq 1 ] || fail "-k 1000 refused"
echo 'record x f32 [1] end
1' | tensordump -r -z 9 >"$T/z.tsr" || fail "-z 9 refused"
tensordump -f 0- -v0 "$T/z.tsr" >/dev/null || fail "-f 0- refused"

exit $((errors > 0))
