#!/bin/sh
# README.md speaks to users and stays short: at most 250 lines, and no
# history in it (no issue numbers, no dates or times of runs): those go
# in doc/.  Each link to a file of the tree points at one that exists.
set -u
. "$(dirname "$0")/lib/cli.sh"
R=$root/README.md
n=$(wc -l < "$R")
[ "$n" -le 250 ] || fail "README.md has $n lines, more than 250"
months='January|February|March|April|May|June|July|August|September|October|November|December'
grep -nEi "issue[s]? #?[0-9]|(^|[^0-9])#[0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,2} ($months) [0-9]{4}|($months) [0-9]{4}|[0-9]{2}:[0-9]{2}( |-)|UTC" \
	"$R" > hits && fail "history in README.md: $(cat hits)"
grep -o '](doc/[^)#]*' "$R" | sed 's/^](//' | sort -u | while read -r f; do
	[ -e "$root/$f" ] || echo "$f"
done > missing
[ -s missing ] && fail "README.md links to what is not there: $(cat missing)"
exit 0
