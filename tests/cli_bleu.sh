#!/bin/sh
# bleu(1): sacreBLEU's README example to the digit in every output form,
# sentence level, several systems and paired tests, and every kind of bad
# input (a clear message and exit status 1 or 2).
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
# expect WANT CMD...: CMD's standard output is exactly WANT
expect() {
	want=$1
	shift
	got=$("$@" 2>err) || fail "$*: exit $?: $(cat err)"
	[ "$got" = "$want" ] || fail "$*: got '$got', want '$want'"
}
# refuse STATUS PATTERN CMD...: CMD exits STATUS saying PATTERN on stderr
refuse() {
	status=$1 pattern=$2
	shift 2
	"$@" >out 2>err
	rc=$?
	[ $rc -eq "$status" ] || fail "$*: exit $rc, want $status"
	grep -q "^bleu: .*$pattern" err || fail "$*: stderr '$(cat err)' lacks '$pattern'"
}

printf 'The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n' >r1
printf 'The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n' >r2
printf "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n" >hyp
V=version:attn-$(bleu --version | sed 's/.* //')

expect "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|$V = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)" \
	sh -c 'bleu r1 r2 -f text -w 2 <hyp'
expect "  BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|$V = 48.5 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|$V = 59.7" \
	sh -c 'bleu r1 r2 -m chrf bleu -f text <hyp'
expect '{
 "name": "BLEU",
 "score": 48.5,
 "signature": "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|'"$V"'",
 "verbose_score": "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)",
 "nrefs": "2",
 "case": "mixed",
 "eff": "no",
 "tok": "13a",
 "smooth": "exp",
 "version": "'"${V#version:}"'"
}' sh -c 'bleu r1 r2 <hyp'
expect 48.5308 sh -c 'bleu r1 r2 -b -w 4 <hyp'
expect 49.1920 sh -c 'bleu r1 r2 -tok none -b -w 4 <hyp'
expect 43.9162 sh -c 'bleu r1 r2 -tok intl -b -w 4 <hyp'
expect 59.73 sh -c 'bleu r1 r2 -m chrf -b -w 2 <hyp'
expect "$(printf '48.5\n59.7')" sh -c 'SACREBLEU_FORMAT=text bleu r1 r2 -m bleu chrf -b <hyp'
# a missing reference line is left out of its segment (nrefs:var)
printf '\nIt was not unexpected.\nThe man bit him first.\n' >r1v
expect "BLEU|nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|$V = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)" \
	sh -c 'bleu r1v r2 -f text -w 2 <hyp'
# CRLF: the same scores
tr '\n' '\r' <hyp | sed 's/\r/\r\n/g' >hyp.crlf
expect 48.5308 sh -c 'bleu r1 r2 -b -w 4 <hyp.crlf'

# sentence level: sacreBLEU issue 98, one line per segment, empty included
echo 'producţia de zahăr brut se exprimă în zahăr alb;' >sr
echo 'Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;' >sh
expect 8.493 sh -c 'bleu -sl sr -b -w 3 <sh'
expect 14.883 sh -c 'bleu -sl sr -s add-k -b -w 3 <sh'
expect 4.517 sh -c 'bleu -sl sr -s floor -b -w 3 <sh'
printf 'a b c d\n\n' >sl.ref.h
printf 'a b c d\nx\n' >sl.ref
expect "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|$V = 100.0 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)
BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|$V = 0.0 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 1)" \
	sh -c 'bleu -sl sl.ref -f text <sl.ref.h'

# several systems: a table; paired tests: p-values and signatures
cp hyp sys1
printf 'A dog bit a man.\nIt was surprising.\nThe man bit him.\n' >sys2
bleu r1 r2 -i sys1 sys2 -f text >table || fail "two systems: exit $?"
grep -q '^│ *sys1 │  48.5  │$' table || fail "table: $(cat table)"
bleu r1 r2 -i sys1 sys1 sys2 -m bleu chrf --paired-bs -f text >paired || fail "paired-bs: exit $?"
grep -q 'System │  BLEU (μ ± 95% CI)' paired ||
	fail "paired-bs header: $(cat paired)"
grep -q '(p = [01]\.[0-9]\{4\})' paired || fail "paired-bs: no p-value: $(cat paired)"
grep -q "^ - BLEU       nrefs:2|bs:1000|seed:12345|case:mixed" paired || fail "paired-bs signature"
bleu r1 r2 -i sys1 sys2 --paired-ar >paired.json || fail "paired-ar: exit $?"
grep -q '"p_value": 0\.' paired.json || fail "paired-ar json: $(cat paired.json)"
paste sys1 sys2 | bleu r1 r2 -b -f text >cols || fail "columns: exit $?"
grep -q 'System 2' cols || fail "columns: $(cat cols)"

# bad input
refuse 1 'standard input has 3 lines but short has 2' sh -c 'head -2 r1 >short; bleu short <hyp'
refuse 1 'missing: No such file or directory' sh -c 'bleu missing <hyp'
refuse 1 'standard input: line 2: invalid UTF-8 (byte 0xff at column 3)' sh -c 'printf "a\nbc\377\nd\n" | bleu r1'
refuse 1 'r1bad: line 1: invalid UTF-8' sh -c 'printf "\300\257\n" >r1bad; echo x | bleu r1bad'
refuse 1 'emptyref: line 2: empty reference' sh -c 'printf "a\n \nc\n" >emptyref; bleu emptyref <hyp'
refuse 1 'line 1: every reference is empty' sh -c 'printf "\n" >e1; printf "\n" >e2; echo x | bleu e1 e2'
refuse 1 'standard input: no lines to score' sh -c ': | bleu r1'
refuse 1 'line 2: fewer tab-separated fields' sh -c 'printf "a\tb\nc\n" | bleu r1'
refuse 1 'paired test needs two or more systems' sh -c 'bleu r1 --paired-bs <hyp'
refuse 2 'no reference file given' sh -c 'bleu <hyp'
refuse 2 "unknown metric 'ter'" sh -c 'bleu r1 -m ter <hyp'
refuse 2 'only one metric at sentence level' sh -c 'bleu r1 -sl -m bleu chrf <hyp'
# empty hypotheses are scored, and reported
printf '\n\n\n' >blank
expect 0.0 sh -c 'bleu r1 -b <blank'
grep -q '3 of 3 hypotheses are empty' err || fail "no warning for empty hypotheses"
bleu --help | grep -q '^usage: bleu' || fail "--help"

[ $errors -eq 0 ]
