#!/bin/sh
# tensordump: the listing, statistics, values, filters, --check, and the
# text form's exact round trip; damaged streams refused with exit 1 and a
# message naming the stream, the offset and the record.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
# expect FILE: compares "$T/out" with FILE's lines.
expect() {
	cmp -s "$T/out" "$1" || { fail "$2: output differs:"; diff "$1" "$T/out" >&2; }
}

tensordump --help >"$T/out" 2>&1 && grep -q '^usage: tensordump' "$T/out" ||
	fail "--help"
tensordump --version | grep -q '^tensordump (attn) ' || fail "--version"
tensordump --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad option: not 2"
tensordump -z 3 </dev/null >/dev/null 2>&1; [ $? -eq 2 ] || fail "-z alone: not 2"

# A stream written by hand.
cat >"$T/in.txt" <<'END'
# two frames
record src.text u8 [6]
"hola\n" "!"
record src.ids i32 [3] end
5 -6 2
record enc.out f32 [2,3] frame 1
1 2 3
4 nan -inf
record w f16 [] frame 1 end
0.5
END
tensordump -r "$T/in.txt" >"$T/a.tsr" || fail "-r: status $?"

tensordump "$T/a.tsr" >"$T/out"
cat >"$T/want" <<'END'
#frame  name                 dtype shape               bytes     stored  flags
     0  src.text             u8    [6]                     6          6  -
     0  src.ids              i32   [3]                    12         12  end
     1  enc.out              f32   [2,3]                  24         24  -
     1  w                    f16   []                      2          2  end
# end mark: the stream ended normally after 2 frames
END
expect "$T/want" listing

tensordump -H -s -n 'src.*' "$T/a.tsr" >"$T/out"
cat >"$T/want" <<'END'
     0  src.text             u8    [6]                     6          6  -                  10          111      77.1667      40.1473      0      0
     0  src.ids              i32   [3]                    12         12  end                -6            5     0.333333       4.6428      0      0
END
expect "$T/want" "--stats --name"

tensordump -H -s -f 1 -n enc.out "$T/a.tsr" | awk '{print $8, $9, $10, $11, $12, $13}' >"$T/out"
echo "1 4 2.5 1.11803 1 1" >"$T/want"
expect "$T/want" "--stats with NaN and Inf"

tensordump -H -v2 -f 1- "$T/a.tsr" >"$T/out"
cat >"$T/want" <<'END'
     1  enc.out              f32   [2,3]                  24         24  -
        1 2 ... (4 more)
     1  w                    f16   []                      2          2  end
        0.5
END
expect "$T/want" "--values=2 --frame"
tensordump -H --values=all -n enc.out "$T/a.tsr" | tail -n 1 >"$T/out"
echo "        1 2 3 4 nan -inf" >"$T/want"
expect "$T/want" "--values=all"

# The text form: the canonical text, and exact round trips.
tensordump -t "$T/a.tsr" >"$T/out"
cat >"$T/want" <<'END'
tsr-text 1
record src.text u8 [6] frame 0
"hola\n"
"!"
record src.ids i32 [3] frame 0 end
5 -6 2

record enc.out f32 [2,3] frame 1
1 2 3
4 nan -inf
record w f16 [] frame 1 end
0.5

# end mark: the stream ended normally after 2 frames
END
expect "$T/want" "--text"
tensordump -r "$T/out" | cmp -s - "$T/a.tsr" || fail "text round trip not exact"
tensordump -r -z 9 "$T/in.txt" >"$T/z.tsr"
tensordump -H "$T/z.tsr" | grep -v '^#' | awk '{print $7}' | tr '\n' ' ' >"$T/out"
printf 'zlib zlib,end zlib zlib,end ' >"$T/want"
expect "$T/want" "-z 9 flags"
tensordump -t "$T/z.tsr" | tensordump -r | cmp -s - "$T/z.tsr" ||
	fail "compressed round trip not exact"
cat "$T/a.tsr" "$T/z.tsr" "$T/a.tsr" >"$T/cat.tsr"
# joined streams: the same records, their three end marks made one
tensordump -t "$T/cat.tsr" | tensordump -r >"$T/cat2.tsr"
tensordump -t "$T/cat.tsr" | grep -v '^# end mark' >"$T/want"
tensordump -t "$T/cat2.tsr" | grep -v '^# end mark' >"$T/out"
expect "$T/want" "concatenated round trip"
tensordump -c "$T/cat.tsr" >"$T/out" || fail "--check of a good stream"
echo "$T/cat.tsr: 12 records in 6 frames, ok, 3 end marks" >"$T/want"
expect "$T/want" "--check"
tensordump -c "$T/cat2.tsr" >"$T/out" || fail "--check of cat2.tsr"
echo "$T/cat2.tsr: 12 records in 6 frames, ok, 1 end mark" >"$T/want"
expect "$T/want" "--check of the round trip"

# Damaged streams: exit 1, a message naming stream, offset and record.
# (the last record's payload ends where the end mark, the last TNSR, starts)
size=$(grep -obUa TNSR "$T/a.tsr" | tail -1 | cut -d: -f1)
head -c $((size - 1)) "$T/a.tsr" >"$T/cut.tsr"
tensordump -c "$T/cut.tsr" >/dev/null 2>"$T/err"; st=$?
[ $st -eq 1 ] || fail "truncated: status $st"
grep -q "^tensordump: $T/cut.tsr: byte 280, record \"w\", frame 1: truncated: end of input after 1 of the 2 bytes of the payload\$" "$T/err" ||
	fail "truncated: $(cat "$T/err")"
# Flip one payload byte of src.ids (its payload is at byte 128).
{ head -c 128 "$T/a.tsr"; printf '\377'; tail -c +130 "$T/a.tsr"; } >"$T/bad.tsr"
tensordump <"$T/bad.tsr" >"$T/out" 2>"$T/err"; st=$?
[ $st -eq 1 ] || fail "checksum: status $st"
grep -q '^tensordump: <stdin>: byte 70, record "src.ids", frame 0: checksum mismatch' "$T/err" ||
	fail "checksum: $(cat "$T/err")"
[ "$(wc -l <"$T/out")" -eq 2 ] || fail "checksum: the good record before it not shown"
printf 'not a stream at all' | tensordump -c >/dev/null 2>"$T/err"; st=$?
[ $st -eq 1 ] && grep -q 'byte 0: bad magic "not "' "$T/err" || fail "bad magic: $st $(cat "$T/err")"
tensordump -c /nonexistent.tsr 2>/dev/null; [ $? -eq 1 ] || fail "missing file: not 1"
# A frame with two src.ids (a spliced stream): refused by -c (the reader
# of every program), naming the record and the frame; the same name in
# the next frame is fine.
printf 'record src.ids i32 [2]\n4 5\nrecord src.ids i32 [2] end\n6 2\n' |
	tensordump -r >"$T/dup.tsr" || fail "tensordump -r of the spliced frame"
tensordump -c "$T/dup.tsr" >/dev/null 2>"$T/err"; st=$?
[ $st -eq 1 ] && grep -q "^tensordump: $T/dup.tsr: byte [0-9]*, record \"src.ids\", frame 0: a second record of this name in the frame" "$T/err" ||
	fail "a repeated name: $st $(cat "$T/err")"
printf 'record src.ids i32 [2] end\n4 5\nrecord src.ids i32 [2] end\n6 2\n' |
	tensordump -r | tensordump -c >/dev/null || fail "one name in two frames refused"

# Bad text: exit 1, the line and the record named.
printf 'record x i8 [2]\n1 300\n' | tensordump -r >/dev/null 2>"$T/err"; st=$?
[ $st -eq 1 ] && grep -q '^tensordump: <stdin>:2: record "x": value 1: "300" is not an i8$' "$T/err" ||
	fail "bad text: $st $(cat "$T/err")"

# --limit: a larger payload refused before it is read (enc.out, 24
# bytes, over 12), in bytes or with a suffix.
tensordump -l 12 "$T/a.tsr" >"$T/out" 2>"$T/err"; st=$?
msg='record "enc.out", frame 1: shape exceeds the limit of 12 bytes$'
[ $st -eq 1 ] && grep -q "$msg" "$T/err" ||
	fail "--limit 12: $st $(cat "$T/err")"
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "--limit 12: the records before"
tensordump --limit 1k "$T/a.tsr" >/dev/null || fail "--limit 1k: status $?"
tensordump --limit 0 "$T/a.tsr" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--limit 0: not 2"

# A reader that stops early ends the writer quietly, status 0.
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "record x f32 [64] frame %d end\n0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63\n", i }' >"$T/big.txt"
{ tensordump -r "$T/big.txt" 2>"$T/err"; echo $? >"$T/st"; } | head -c 100 >/dev/null
[ "$(cat "$T/st")" = 0 ] && [ ! -s "$T/err" ] || fail "early stop: status $(cat "$T/st") $(cat "$T/err")"
# -v's count may be the next word (before, "-v all" read "all" as a file)
printf 'tsr-text 1\nrecord x i32 [12] frame 0 end\n1 2 3 4 5 6 7 8 9 10 11 12\n' |
	tensordump -r > "$T/v.tsr"
for o in "-v all" "-vall" "--values all" "--values=all"; do
	# shellcheck disable=SC2086
	[ "$(tensordump -n x $o "$T/v.tsr" | tail -1 | awk '{ print NF }')" = 12 ] ||
		fail "tensordump $o: $(tensordump $o "$T/v.tsr" 2>&1 | tail -1)"
done
[ "$(tensordump -n x -v 3 "$T/v.tsr" | tail -1)" = "        1 2 3 ... (9 more)" ] ||
	fail "tensordump -v 3: $(tensordump -v 3 "$T/v.tsr" 2>&1 | tail -1)"
[ "$(tensordump -v "$T/v.tsr" | tail -2 | head -1 | awk '{ print $NF }')" = "more)" ] ||
	fail "tensordump -v FILE"
[ $errors -eq 0 ]
