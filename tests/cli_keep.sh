#!/bin/sh
# What is kept as written (tokenize --keep, --no-keep, --keep-as;
# decode, beam, tokenize -d putting the spans back): tokenize then
# tokenize -d gives every line back byte for byte; through a tiny model
# that cannot copy anything and through the shipped one, with and
# without -A, in both maskings, every span of line N is in output line
# N exactly once, and empty lines stay; --no-keep; the refusals (a regex
# that does not compile or matches the empty string, an unknown kind,
# options that do not go together, a damaged src.keep.pos).
set -eu
. "$(dirname "$0")/lib/cli.sh"
M=$root/models/bible-es-en.tsr

# once IN OUT SPANS: line N of OUT holds each tab-separated span of line N
# of SPANS as many times as it is listed there, and OUT has IN's lines
once() {
	[ "$(wc -l < "$2")" -eq "$(wc -l < "$1")" ] ||
		fail "$2 has $(wc -l < "$2") lines, $1 $(wc -l < "$1")"
	paste -d '\n' "$3" "$2" | awk -f "$root/tools/keep-count.awk" > count
	awk 'END { exit $1 != $2 }' count ||
		fail "$2: a span lost or repeated: $(cat count)"
}

printf '%s\n' \
	'ab cd https://a.es/x?y=1. ef' \
	'' \
	'gh 10:30 ij -12 kl 3.5% y 1.234,56 €' \
	'`make ab` en /usr/bin/env o C:\Temp con %1$d y {{name}}' \
	'ab@cd.org ef $HOME' \
	'ab cd' 'de %s a %s' "x '%s' y" > in.txt
printf '%s\n' \
	'https://a.es/x?y=1' \
	'' \
	'10:30	-12	3.5%	1.234,56 €' \
	'`make ab`	/usr/bin/env	C:\Temp	%1$d	{{name}}' \
	'ab@cd.org	$HOME' \
	'' '%s	%s' '%s' > spans.txt

# tokenize and back: the line as it was; the masked text without them
sentences 5 200 2 5 "s r" > pairs.txt
trained m.tsr pairs.txt 30
tokenize -m m.tsr < in.txt > in.tsr
tokenize -d -m m.tsr < in.tsr | cmp -s - in.txt ||
	fail "tokenize -d: $(tokenize -d -m m.tsr < in.tsr)"
tokenize -d --no-keep -m m.tsr < in.tsr > masked.txt
printf '%s\n' 'ab cd Moab. ef' '' \
	'gh Moab ij David kl Jacob y Aaron' \
	'Moab en David o Jacob con Aaron y Samuel' 'Moab ef David' 'ab cd' \
	'de Moab a David' "x 'Moab' y" |
	cmp -s - masked.txt || fail "masked: $(cat masked.txt)"
tensordump -H < in.tsr | grep -c 'src.keep.pos  *i32  *\[[0-9]*,4\]' |
	grep -qx 6 || fail "src.keep.pos: $(tensordump -H < in.tsr)"
tokenize --no-keep -m m.tsr < in.txt | tensordump -H | grep -q src.keep &&
	fail "--no-keep wrote src.keep"
tokenize --no-keep=url,number -m m.tsr < in.txt | tokenize -d --no-keep \
	-m m.tsr | sed -n 1p | grep -qx 'ab cd https://a.es/x?y=1. ef' ||
	fail "--no-keep=url,number masked a URL"

# through a model that copies nothing: every span once, in each way
for as in name drop; do
	tokenize -m m.tsr --keep-as=$as < in.txt | stages m.tsr > mem.tsr
	beam -m m.tsr -k 2 < mem.tsr > out.txt
	once in.txt out.txt spans.txt
	decode -m m.tsr < mem.tsr > out.txt
	once in.txt out.txt spans.txt
	beam -m m.tsr -k 2 -A < mem.tsr | sed 's/ ||| .*//' > out.txt
	once in.txt out.txt spans.txt
	decode -m m.tsr -t < mem.tsr | tokenize -d -m m.tsr > out.txt
	once in.txt out.txt spans.txt
done
beam -m m.tsr -k 2 --no-keep < mem.tsr > out.txt
grep -qF '10:30' out.txt && fail "--no-keep: a span put back"

# the shipped model: what it copies and what -A places
sed -n 1,5p "$root/examples/everyday.es" > ev.txt
for as in name drop; do
	tokenize -m "$M" --keep-as=$as < ev.txt | stages "$M" |
		beam -m "$M" -A | sed 's/ ||| .*//' > out.txt
	printf '%s\n' \
		'915 123 456	soporte@ejemplo.com	https://www.ejemplo.es/ayuda	2025' \
		'10:30	12:45' '3.5%	1.234,56 €' '-12	2025-01-31' \
		'/usr/bin/env	C:\Temp' > evspans.txt
	once ev.txt out.txt evspans.txt
done

# --keep REGEX: the user's spans; one matching a whole line keeps it
printf 'vuelo IB 3166\nnada\n' > re.txt
tokenize -m m.tsr --keep 'IB [0-9]+' --no-keep=number < re.txt |
	tokenize -d --no-keep -m m.tsr | sed -n 1p | grep -qx 'vuelo Moab' ||
	fail "--keep: not masked"
tokenize -m m.tsr --keep '^.+$' < re.txt | stages m.tsr |
	beam -m m.tsr -k 2 > out.txt
printf 'vuelo IB 3166\nnada\n' > respans.txt
once re.txt out.txt respans.txt

# refusals
exits 2 tokenize -m m.tsr --keep '(ab' < in.txt
err_has "tokenize: option --keep: '(ab'"
exits 2 tokenize -m m.tsr --keep '.*' < in.txt
err_has "matches the empty string"
exits 2 tokenize -m m.tsr --no-keep=urls < in.txt
err_has "'urls' is not url"
exits 2 tokenize -m m.tsr -d --keep x < in.tsr
exits 2 tokenize -m m.tsr -f units --keep-as=drop < in.txt
exits 2 tokenize -m m.tsr --keep-as=copy < in.txt
# src.keep.pos that does not add up to src.keep: one message, exit 1
printf 'ab 10:30 cd\n' | tokenize -m m.tsr | tensordump -t |
	sed 's/^5 1 0 0$/4 1 0 0/' | tensordump -r | stages m.tsr > bad.tsr
exits 1 beam -m m.tsr -k 2 < bad.tsr
err_has "beam: frame 0: src.keep has 5 bytes, src.keep.pos's lengths 4"
exits 1 tokenize -d -m m.tsr < bad.tsr
err_has "src.keep has 5 bytes"
