#!/bin/sh
# check-layers (tools/check-layers.sh, run by make check): a small tree
# with every allowed kind of include passes silently; each upward include
# planted in it fails naming the file, the line and the rule; an upward
# include planted in a copy of the real lib/ and cmd/ is reported at its
# line and changes nothing else in the report.
set -u
. "$(dirname "$0")/lib/cli.sh"
check=$root/tools/check-layers.sh
errors=0

# put FILE LINE...: writes FILE with one line per argument.
put() {
	f=$1
	shift
	mkdir -p "$(dirname "$f")"
	printf '%s\n' "$@" >"$f"
}

# The allowed includes, written from the layer rule by hand: each layer's
# file includes every layer below it by path, and its own folder by name.
mktree() {
	rm -rf "$T/t"
	put "$T/t/lib/base/b.h" '#include <stdio.h>' '#include "b2.h"'
	put "$T/t/lib/base/b2.h" '/* nothing */'
	put "$T/t/lib/stream/s.c" '#include "base/b.h"' '#include "s.h"'
	put "$T/t/lib/stream/s.h" '#include <stdint.h>'
	put "$T/t/lib/kernels/k.h" '#include "base/b.h"'
	put "$T/t/lib/kernels/x86/k_avx2.c" '#include "kernels/k.h"' \
	    '  #  include "base/b.h"'
	put "$T/t/lib/nn/n.c" '#include "base/b.h"' '#include "kernels/k.h"' \
	    '#include "n.h"'
	put "$T/t/lib/models/m.h" '#include "stream/s.h"' '#include "nn/n.h"' \
	    '#include "kernels/k.h"' '#include "base/b.h"'
	put "$T/t/lib/models/rnn/r.c" '#include "models/m.h"' '#include "r.h"'
	put "$T/t/lib/models/transformer/t.c" '#include "models/rnn/r.h"'
	put "$T/t/lib/text/x.c" '#include "base/b.h"'
	put "$T/t/lib/eval/e.c" '#include "base/b.h"'
	put "$T/t/lib/run/u.c" '#include "models/m.h"' '#include "text/x.h"' \
	    '#include "eval/e.h"' '#include "stream/s.h"' '#include "nn/n.h"' \
	    '#include "kernels/k.h"' '#include "base/b.h"' '#include "u.h"'
	put "$T/t/cmd/common/p.c" '#include "run/u.h"' '#include "p.h"' \
	    '#include "common/q.h"'
	put "$T/t/cmd/prog.c" '#include "common/p.h"' '#include "run/u.h"' \
	    '#include "text/x.h"' '#include "stream/s.h"'
}

mktree
sh "$check" "$T/t" >"$T/out" 2>&1 || fail "allowed includes refused"
[ -s "$T/out" ] && fail "allowed includes: output: $(cat "$T/out")"

# plant FILE INCLUDE RULE: FILE (under the tree) gets INCLUDE as its
# second line; check-layers must fail and print exactly that line's
# offence with RULE, and nothing else on stdout.
plant() {
	mktree
	f=$T/t/$1
	mkdir -p "$(dirname "$f")"
	{ echo '/* planted */'; echo "#include \"$2\""; } >"$f.new"
	[ -f "$f" ] && cat "$f" >>"$f.new"
	mv "$f.new" "$f"
	sh "$check" "$T/t" >"$T/out" 2>"$T/err"
	st=$?
	[ $st -eq 1 ] || fail "$1 including $2: exit $st, not 1"
	echo "$1:2: #include \"$2\": $3" >"$T/want"
	cmp -s "$T/out" "$T/want" ||
		fail "$1 including $2: printed '$(cat "$T/out")'"
	grep -q '^check-layers: 1 offence against the layers' "$T/err" ||
		fail "$1 including $2: no summary on stderr"
}
plant lib/base/b.h stream/s.h "base may include only base, not stream"
plant lib/stream/s.c kernels/k.h \
    "stream may include only base and stream, not kernels"
plant lib/kernels/x86/k_avx2.c nn/n.h \
    "kernels may include only base and kernels, not nn"
plant lib/nn/n.c models/transformer/t.h \
    "nn may include only base kernels and nn, not models"
plant lib/models/rnn/r.c run/u.h \
    "models may include only base stream kernels nn and models, not run"
plant lib/text/x.c stream/s.h "text may include only base and text, not stream"
plant lib/eval/e.c text/x.h "eval may include only base and eval, not text"
plant lib/run/u.c common/p.h \
    "run may include only base stream kernels nn models text eval and run, not cmd"
plant lib/stream/s.h ../run/u.h "a path with . or .., not by layer"
plant lib/base/b2.h zz/z.h '"zz" is not a layer'

# A file outside every layer folder is an offence of its own.
mktree
put "$T/t/lib/loose.c" '#include "base/b.h"'
sh "$check" "$T/t" >"$T/out" 2>/dev/null && fail "lib/loose.c accepted"
grep -qx 'lib/loose.c: not in a layer folder: "lib" is not a layer of tools/check-layers.sh' \
    "$T/out" || fail "lib/loose.c: printed '$(cat "$T/out")'"

# The real tree: an upward include planted in a copy of lib/stream is the
# one new line of the report, at its file and line.
mkdir "$T/real"
cp -R "$root/lib" "$root/cmd" "$T/real/" || fail "copying the tree"
sh "$check" "$T/real" >"$T/before" 2>/dev/null
f=$(cd "$T/real" && ls lib/stream/*.c | head -n 1)
n=$(($(wc -l <"$T/real/$f") + 1))
echo '#include "run/train.h"' >>"$T/real/$f"
sh "$check" "$T/real" >"$T/after" 2>/dev/null && fail "real tree: planted include accepted"
line="$f:$n: #include \"run/train.h\": stream may include only base and stream, not run"
grep -qxF "$line" "$T/after" || fail "real tree: '$line' not reported"
grep -vxF "$line" "$T/after" | cmp -s - "$T/before" ||
	fail "real tree: the planted include changed other lines of the report"

[ "$errors" -eq 0 ]
