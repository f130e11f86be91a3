#!/bin/sh
# decode and beam print the alignment and the score with each line
# (text ||| alignment ||| score), checked against score run on the
# translations found (forced decoding: another path through the model);
# n-best lines have Moses' four fields, i ||| text ||| F0= logp ||| score,
# the score logp over the length penalty, checked by hand.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
# close A B: two numbers within 1e-4.
close() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-4 && d > -1e-4) }'
}

i=0
while [ $i -lt 20 ]; do
	printf 'el perro come la comida\tthe dog eats the food\n'
	printf 'el gato come\tthe cat eats\n'
	i=$((i + 1))
done > pairs
cut -f 1 pairs > src
cut -f 2 pairs > tgt
tokenize -l 300 src tgt > vocab 2>/dev/null
for arch in rnnsearch transformer; do
	rm -f m.tsr
	case $arch in
	transformer) new_model m.tsr $arch vocab vocab ffn=16 || exit 1 ;;
	*) new_model m.tsr $arch vocab vocab || exit 1 ;;
	esac
	printf 'el perro come\nel gato\nla comida del perro\n' |
		tokenize -m m.tsr | stages m.tsr > mem.tsr || exit 1

	# decode's lines, and score on the translations it found
	decode -m m.tsr -c 4 -A --scores < mem.tsr > d.txt || fail "decode -A"
	decode -m m.tsr -c 4 --scores --normalize < mem.tsr > dn.txt
	decode -m m.tsr -c 4 < mem.tsr > plain.txt
	decode -m m.tsr -c 4 -t < mem.tsr | tensordump -t |
		sed 's/^record hyp\.ids /record tgt.ids /' | tensordump -r > hyp.tsr
	score -m m.tsr -A < hyp.tsr > sa.txt
	score -m m.tsr < hyp.tsr > s.txt
	score -m m.tsr -n < hyp.tsr > sn.txt
	[ "$(wc -l < d.txt)" -eq 3 ] || fail "$arch: decode -A: $(cat d.txt)"
	n=0
	while [ $n -lt 3 ]; do
		n=$((n + 1))
		line=$(sed -n ${n}p d.txt)
		text=${line%% ||| *}
		rest=${line#* ||| }
		al=${rest%% ||| *}
		sc=${rest#* ||| }
		[ "$text" = "$(sed -n ${n}p plain.txt)" ] ||
			fail "$arch line $n: '$text' is not decode's text"
		[ "$al" = "$(sed -n ${n}p sa.txt)" ] ||
			fail "$arch line $n: alignment '$al', score -A" \
			     "'$(sed -n ${n}p sa.txt)'"
		close "$sc" "$(sed -n ${n}p s.txt)" ||
			fail "$arch line $n: score $sc, score's $(sed -n ${n}p s.txt)"
		nsc=$(sed -n ${n}p dn.txt); nsc=${nsc##* ||| }
		close "$nsc" "$(sed -n ${n}p sn.txt)" ||
			fail "$arch line $n: --normalize $nsc," \
			     "score -n's $(sed -n ${n}p sn.txt)"
	done

	# beam -k 1 is decode: the n-best line holds its text and score
	beam -m m.tsr -c 4 -k 1 -n 1 -l 0 < mem.tsr > b1.txt
	n=0
	while [ $n -lt 3 ]; do
		n=$((n + 1))
		want="$((n - 1)) ||| $(sed -n ${n}p plain.txt) ||| F0= "
		line=$(sed -n ${n}p b1.txt)
		case $line in "$want"*) ;; *) fail "$arch: '$line'" ;; esac
		raw=$(echo "$line" | awk -F ' [|][|][|] ' '{ sub(/F0= /, "", $3); print $3 }')
		last=$(echo "$line" | awk -F ' [|][|][|] ' '{ print $4 }')
		close "$raw" "$(sed -n ${n}p s.txt)" ||
			fail "$arch: beam -k 1 F0= $raw, decode's $(sed -n ${n}p s.txt)"
		close "$raw" "$last" || fail "$arch: -l 0: $raw and $last differ"
	done

	# the ranking score: F0 / ((5 + len) / 6)^1.0, len the best's ids (alpha
	# 1.0, beam's default: doc/decoding.md)
	beam -m m.tsr -c 4 -k 4 -n 3 < mem.tsr > b3.txt
	beam -m m.tsr -c 4 -k 4 -t < mem.tsr | tensordump -n hyp.ids |
		awk 'NR > 1 { gsub(/[][]/, "", $4); print $4 }' > len.txt
	awk -F ' [|][|][|] ' 'NF != 4 { print "fields: " $0 }' b3.txt > bad
	[ -s bad ] && fail "$arch: n-best lines: $(cat bad)"
	[ "$(wc -l < b3.txt)" -eq 9 ] || fail "$arch: not 9 n-best lines"
	for s in 0 1 2; do
		line=$(grep "^$s |||" b3.txt | head -1)
		len=$(sed -n $((s + 1))p len.txt)
		want=$(echo "$line" | awk -F ' [|][|][|] ' -v len="$len" '{
			sub(/F0= /, "", $3); print $3 / ((5 + len) / 6) ^ 1.0 }')
		close "$want" "${line##* ||| }" ||
			fail "$arch: sentence $s: score ${line##* ||| }, want $want"
	done
	beam -m m.tsr -c 4 -k 4 -n 2 -A < mem.tsr > b2a.txt
	awk -F ' [|][|][|] ' 'NF != 5 || $5 !~ /^([0-9]+-[0-9]+ ?)*$/' \
		b2a.txt > bad
	[ -s bad ] && fail "$arch: n-best with -A: $(cat bad)"

	# beam's default beam is 5 (doc/decoding.md): -n 5 is within it
	beam -m m.tsr -c 4 -n 5 < mem.tsr > b5.txt || fail "$arch: -n 5"
	[ "$(wc -l < b5.txt)" -eq 15 ] || fail "$arch: not 15 5-best lines"
	beam -m m.tsr -c 4 -n 6 < mem.tsr > /dev/null 2> err
	[ $? -eq 2 ] && grep -q -- '-k 5' err ||
		fail "$arch: -n 6 not refused by the default beam: $(cat err)"
done
# --progress: the lines done on stderr at the end (and nothing without
# it when stderr is no terminal)
beam -m m.tsr --progress < mem.tsr > /dev/null 2> err ||
	fail "beam --progress: $(cat err)"
grep -q "^beam: 3 lines, [0-9.]* a second$" err ||
	fail "beam --progress: $(cat err)"
decode -m m.tsr < mem.tsr > /dev/null 2> err
[ -s err ] && fail "decode without --progress: $(cat err)"
[ $errors -eq 0 ]
