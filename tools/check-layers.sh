#!/bin/sh
# check-layers.sh [ROOT]: checks every #include "..." of the C files under
# ROOT/lib and ROOT/cmd (ROOT is . by default) against the table of layers
# below.  A file's layer is its folder under lib/ (lib/kernels/x86 is
# kernels, lib/models/rnn is models) or cmd for cmd/*.c and cmd/common.
# An include names its layer by its first folder ("stream/tensor.h";
# "common/prog.h" is cmd); a bare name is the file's own folder.  A layer
# may include itself and the layers its line lists, nothing else: a lower
# floor never includes a higher one.  Prints FILE:LINE, the include and
# the rule for each offence and exits 1 if there is any; 0 if none.

# layer: the layers it may include besides itself.
TABLE='
base:
stream: base
kernels: base
nn: base kernels
models: base stream kernels nn
text: base
align: base stream kernels
eval: base
import: base stream kernels nn models text
run: base stream kernels nn models text eval
cmd: base stream kernels nn models text eval run import align
'

cd "${1:-.}" || exit 2
[ -d lib ] && [ -d cmd ] || { echo "check-layers: no lib/ and cmd/ in $(pwd)" >&2; exit 2; }
find lib cmd -name '*.[ch]' | LC_ALL=C sort | awk -v table="$TABLE" '
BEGIN {
	n = split(table, rows, "\n")
	for (i = 1; i <= n; i++) {
		if (rows[i] !~ /:/)
			continue
		layer = rows[i]; sub(/:.*/, "", layer)
		deps = rows[i]; sub(/^[^:]*:[ \t]*/, "", deps)
		known[layer] = 1
		rule[layer] = (deps == "" ? "" : deps " and ") layer
		m = split(deps, d, " ")
		for (j = 1; j <= m; j++)
			allowed[layer, d[j]] = 1
	}
	bad = 0
}
# offend(where, text, why): one offence, on one line.
function offend(where, text, why) {
	printf "%s: %s: %s\n", where, text, why
	bad++
}
{
	f = $0
	np = split(f, p, "/")
	from = p[1] == "cmd" ? "cmd" : np > 2 ? p[2] : "lib"
	if (!(from in known)) {
		offend(f, "not in a layer folder", "\"" from "\" is not a " \
		    "layer of tools/check-layers.sh")
		next
	}
	l = 0
	while ((r = (getline s < f)) > 0) {
		l++
		if (s !~ /^[ \t]*#[ \t]*include[ \t]*"/)
			continue
		inc = s; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
		text = "#include \"" inc "\""
		if (inc ~ /(^|\/)\.\.?\//) {
			offend(f ":" l, text, "a path with . or .., not by layer")
			continue
		}
		if (inc !~ /\//)
			to = from
		else {
			to = inc; sub(/\/.*/, "", to)
			if (to == "common")
				to = "cmd"
		}
		if (!(to in known))
			offend(f ":" l, text, "\"" to "\" is not a layer")
		else if (to != from && !((from, to) in allowed))
			offend(f ":" l, text, from " may include only " \
			    rule[from] ", not " to)
	}
	if (r < 0)
		offend(f, "unreadable", "cannot be checked")
	close(f)
}
END {
	if (bad)
		printf "check-layers: %d offence%s against the layers; the " \
		    "table is in tools/check-layers.sh\n", \
		    bad, bad == 1 ? "" : "s" > "/dev/stderr"
	exit bad != 0
}'
