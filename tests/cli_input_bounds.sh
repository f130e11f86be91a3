#!/bin/sh
# The bounds of what the programs read as text (issue 45, items 1, 6, 8):
# a line that memory cannot hold is an error naming the file and line,
# exit 1, never taken for the end of input (getline's ENOMEM); tokenize
# refuses a line longer than --max-line (default 1 MiB) before reading
# more of it, so that its memory is bounded; a vocabulary file is at most
# 64 MiB, and -v /dev/zero or --links /dev/zero stop at the bound instead
# of reading until memory runs out.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
F=$root/tests/fixtures/spm
SPM=$F/uni_id_300.model

# in_memory MB CMD...: CMD where an allocation of more than about MB
# megabytes fails (ulimit -v; ASan's allocation limit in the sanitizer
# build); little_memory CMD...: in 60 MB.
if grep -q __asan_init "$(command -v tokenize)"; then
	in_memory() {
		_mb=$1
		shift
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=$_mb:allocator_may_return_null=1 "$@"
	}
else
	in_memory() { (ulimit -v $(($1 * 1000)) && shift && "$@"); }
fi
little_memory() { in_memory 60 "$@"; }
# long N: N bytes of "x"
long() { head -c "$1" /dev/zero | tr '\0' x; }

# ---- item 1: a line memory cannot hold ---------------------------------
{ echo first; long 100000000; echo; echo last; } > big.txt
exits 1 little_memory tokenize --max-line 1G -v "$SPM" -f ids big.txt
err_has "tokenize: big.txt:2: out of memory"
exits 1 little_memory tokenize --max-line 1G -v "$SPM" -f ids - < big.txt
err_has "tokenize: <stdin>:2: out of memory"
# align: pairs on stdin, and two files (which were a wrong line count)
{ echo 'a ||| b'; long 100000000; echo ' ||| c'; echo 'd ||| e'; } > big.pairs
exits 1 little_memory align -q < big.pairs
err_has "align: <stdin>: line 2: Cannot allocate memory"
printf 'a\nb\nc\n' > three.txt
exits 1 little_memory align -q big.txt three.txt
err_has "align: big.txt: line 2: Cannot allocate memory"
# tensordump -r: the text form's reader
{ printf 'tsr-text 1\nrecord src.text u8 [100000000] frame 0 end\n"'
  long 100000000; printf '"\n'; } > big.tsrt
exits 1 little_memory tensordump -r big.tsrt
err_has "tensordump: big.tsrt:3: read error: Cannot allocate memory"
# a read error (a directory) names its cause
exits 1 tokenize -v "$SPM" -f ids /
err_has "tokenize: /:1: Is a directory"
exits 1 align -q / three.txt
err_has "align: /: line 1: Is a directory"
exits 1 bleu -f text / < three.txt
err_has "bleu: /: read error: Is a directory"

# ---- item 6: tokenize's memory is bounded by --max-line -----------------
# up to about 50 bytes a byte of a line: a line of 1 MiB (the default bound)
# runs in little memory, a longer one is refused at once, naming it
long 1048576 > l1m.txt
{ echo; cat l1m.txt; echo; } > at_bound.txt
exits 0 little_memory tokenize -v "$SPM" at_bound.txt
[ "$(tensordump out | grep -c ' src.text ')" -eq 2 ] ||
	fail "a line of 1 MiB: not 2 frames"
{ echo first; long 1048577; echo; echo last; } > over.txt
exits 1 little_memory tokenize -v "$SPM" -f ids over.txt
err_has "tokenize: over.txt:2: a line longer than 1048576 bytes (--max-line)"
[ "$(wc -l < out)" -eq 1 ] || fail "over --max-line: $(wc -l < out) lines out"
exits 1 tokenize -v "$SPM" --max-line 10 -f ids over.txt
err_has "tokenize: over.txt:2: a line longer than 10 bytes (--max-line)"
# the bound is on the text, not its newline; learning reads lines too
printf '0123456789\n' > ten.txt
exits 0 tokenize -v "$SPM" --max-line 10 -f ids ten.txt
printf '0123456789' > ten_nonl.txt
exits 0 tokenize -v "$SPM" --max-line 10 -f ids ten_nonl.txt
exits 1 tokenize -l 300 --max-line 5 ten.txt
err_has "tokenize: ten.txt:1: a line longer than 5 bytes (--max-line)"
exits 2 tokenize -v "$SPM" --max-line 0 ten.txt

# ---- item 8: unbounded reads ---------------------------------------------
# (in little memory: before the bound, these read until memory ran out)
exits 1 in_memory 200 tokenize -v /dev/zero ten.txt
err_has "tokenize: /dev/zero: more than 64 MiB: a vocabulary is at most 64 MiB"
exits 1 in_memory 200 tokenize -v "$SPM" --tgt-vocab /dev/zero ten.txt
err_has "tokenize: /dev/zero: more than 64 MiB"
truncate -s 67108865 huge.vocab
exits 1 tokenize -v huge.vocab ten.txt
err_has "tokenize: huge.vocab: 67108865 bytes: a vocabulary is at most 64 MiB"
exits 1 train-step --init -m new.tsr --arch transformer \
	--src-vocab huge.vocab --tgt-vocab "$SPM"
err_has "train-step: huge.vocab: 67108865 bytes: a vocabulary is at most 64 MiB"
printf 'the cat\tel gato\n' > pair.txt
exits 1 little_memory tokenize -p -v "$SPM" --links /dev/zero pair.txt
err_has "tokenize: /dev/zero:1: a line longer than 1048576 bytes (--max-line)"
exit $((errors > 0))
