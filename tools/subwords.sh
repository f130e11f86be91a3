#!/bin/sh
# subwords.sh: how a subword vocabulary cuts a text: units per line, and
# for a Spanish text, how it spells names and the first words of lines.
#
# usage: tools/subwords.sh VOCAB ES [TEXT...]
#
# For ES and each TEXT: the mean units of a line (tokenize -v VOCAB, </s>
# not counted).  For ES also:
# - names: the capitalised words in the middle of a line (names.sh -l),
#   each cut as it stands in the middle of a line (as "a NAME" less the
#   units of "a"): the mean units of a name and the share of names that
#   are one unit, over all and over distinct names;
# - first words: each line's first word W (up to the first space, for a
#   line that begins with neither a space nor a tab), cut at the start of
#   a line (the line "W") and in the middle of one ("a W" less "a"): the
#   mean units of W at the start, the share of lines where the cuts are
#   the same (the units' text, the leading U+2581 of the middle one
#   aside) and where the units themselves are.
#
# Needs tokenize on PATH.
set -eu
# Bytes, whatever the locale: the marker U+2581 below is cut as 3 bytes,
# and names.sh matches bytes too.
export LC_ALL=C
[ $# -ge 2 ] || { echo "usage: $0 VOCAB ES [TEXT...]" >&2; exit 2; }
vocab=$1 es=$2
shift 2
for f in "$vocab" "$es" "$@"; do
	[ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
units() { tokenize -v "$vocab" -f units "$@"; }

for f in "$es" "$@"; do
	units "$f" | awk -v f="$f" '{ n += NF - 1 }
		END { printf "%s: %.2f units a line (%d lines)\n", f,
		      NR ? n / NR : 0,
		      NR }'
done
# the units of the line "a": what "a W" has before W's
ua=$(echo a | units | awk '{ print NF - 1 }')

sh "$here/names.sh" -l "$es" | cut -f2 >"$tmp/names"
sed 's/^/a /' "$tmp/names" | units | paste "$tmp/names" - |
	awk -F '\t' -v ua="$ua" '{
		n = split($2, w, " ") - 1 - ua
		u += n; one += n == 1
		if (!($1 in seen)) { seen[$1]; d++; du += n; done += n == 1 }
	}
	END { printf "names: %d, %.2f units a name, %.1f%% in one unit\n" \
	      "distinct names: %d, %.2f units a name, %.1f%% in one unit\n",
	      NR, NR ? u / NR : 0, NR ? 100 * one / NR : 0,
	      d, d ? du / d : 0, d ? 100 * done / d : 0 }'

awk '/^[^ \t]/ { sub(/ .*/, ""); print }' "$es" >"$tmp/first"
units "$tmp/first" >"$tmp/start"
sed 's/^/a /' "$tmp/first" | units >"$tmp/middle"
awk -v ua="$ua" -v m="$(printf '\342\226\201')" '
	# the units of line s from the k-th, joined by spaces; with strip,
	# the first without a leading marker (and gone if that was all)
	function from(s, k, strip,   w, n, i, out) {
		n = split(s, w, " ")
		n--                                     # </s>
		if (strip && index(w[k], m) == 1) {
			w[k] = substr(w[k], length(m) + 1)
			if (w[k] == "")
				k++
		}
		for (i = k; i <= n; i++)
			out = out (i > k ? " " : "") w[i]
		return out
	}
	{
		getline mid < "'"$tmp/middle"'"
		units += NF - 1
		same += from($0, 1, 0) == from(mid, ua + 1, 0)
		cuts += from($0, 1, 1) == from(mid, ua + 1, 1)
	}
	END { printf "first words: %d, %.2f units at the start of a line\n" \
	      "first words cut as in the middle: %.1f%%, the same units: " \
	      "%.1f%%\n", NR, NR ? units / NR : 0, NR ? 100 * cuts / NR : 0,
	      NR ? 100 * same / NR : 0 }
	' "$tmp/start"
