#!/bin/sh
# What a file written whole may replace (base/outfile.h): a regular file
# or nothing.  For each writer (align -o, train-step -x, -A -o, --import
# --force, --export-marian's files) and each target that is not a
# regular file -- a symbolic link to a regular file, a dangling link, a
# character device (mknod c 1 7, as /dev/full; skipped unless root), a
# FIFO, a directory -- the writer exits 1 naming the path and what it
# is, the target is as it was (the link a link, still pointing where it
# did, its file's bytes unchanged, a dangling link's file not made), and
# no temporary file is left.  A regular file in the way is replaced.
# --init --force the same.  Training a model named by a link is refused
# before any training, and so is a MODEL.best in the way with --dev.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian
S=$F/vocab.spm

printf 'w1 w2 w3\nw2 w3\nw1 w3\n' > src
printf 'v1 v2 v3\nv2 v3\nv1 v3\n' > tgt
perro_model m.tsr 2>/dev/null || fail "perro_model: status $?"
new_model mt.tsr transformer "$S" "$S" pos=marian ln_eps=1e-6 norm=pre \
	pre_kv=input 2>/dev/null || fail "new_model: status $?"
devices=1
mknod probe c 1 7 2>/dev/null && rm -f probe || devices=0

# mk KIND DIR/NAME: a target of KIND at the path (DIR made)
mk() {
	mkdir -p "$(dirname "$2")"
	case $1 in
	link)     echo keep > victim; ln -s "$T/victim" "$2" ;;
	dangling) rm -f nowhere; ln -s "$T/nowhere" "$2" ;;
	device)   mknod "$2" c 1 7 ;;
	fifo)     mkfifo "$2" ;;
	dir)      mkdir "$2" ;;
	esac
}
# same KIND PATH: the target is still what mk made
same() {
	case $1 in
	link)     [ -L "$2" ] && [ "$(readlink "$2")" = "$T/victim" ] &&
		  [ "$(cat victim)" = keep ] ;;
	dangling) [ -L "$2" ] && [ "$(readlink "$2")" = "$T/nowhere" ] &&
		  [ ! -e nowhere ] ;;
	device)   [ -c "$2" ] ;;
	fifo)     [ -p "$2" ] ;;
	dir)      [ -d "$2" ] && [ -z "$(ls -A "$2")" ] ;;
	esac
}
# what KIND: the words of the refusal
what() {
	case $1 in
	link|dangling) echo "a symbolic link" ;;
	device) echo "a character device" ;;
	fifo) echo "a FIFO" ;;
	dir) echo "a directory" ;;
	esac
}

# writer NAME: the command line that writes to d/t (d/ for
# --export-marian, whose model.npz is then the target)
writer() {
	case $1 in
	align)   echo "align -q -t -o d/t src tgt" ;;
	export)  echo "train-step -x d/t -m m.tsr" ;;
	average) echo "train-step -A 2 -o d/t m.tsr m.tsr" ;;
	import)  echo "train-step --import marian -f -m d/t $F/post.npz $S" ;;
	marian)  echo "train-step --export-marian d -m mt.tsr" ;;
	esac
}

for w in align export average import marian; do
	target=d/t
	[ $w = marian ] && target=d/model.npz
	for kind in link dangling device fifo dir; do
		[ $kind = device ] && [ $devices = 0 ] && continue
		rm -rf d victim nowhere
		mk $kind $target
		exits 1 $(writer $w)
		err_has "$target exists and is not a regular file ($(what $kind)): not replaced"
		same $kind $target || fail "$w: the $kind at $target changed"
		left=$(ls -A d | grep -v '^\(t\|model.npz\|t.lock\)$' || :)
		[ -z "$left" ] || fail "$w, $kind: left $left"
	done
	# a regular file is replaced
	rm -rf d
	mkdir d
	echo old > $target
	exits 0 $(writer $w)
	[ -f $target ] && [ "$(cat $target)" != old ] ||
		fail "$w: a regular file not replaced"
done

# --init --force: the same rule, before the lock file is made
ln -s nowhere init.tsr
exits 1 train-step -i -f -m init.tsr -a rnnsearch -s vocab -t vocab \
	-S emb=8 -S hidden=8 -S att=8 -S maxout=4
err_has "init.tsr exists and is not a regular file (a symbolic link)"
[ -L init.tsr ] && [ ! -e nowhere ] && [ ! -e init.tsr.lock ] ||
	fail "--init --force: the link or its file changed, or a lock made"

# training: a model that is a link is refused before any training
cp m.tsr real.tsr
ln -s real.tsr link.tsr
printf 'el perro come\tel perro come\n' > pairs
tokenize -p -m m.tsr pairs > pairs.tsr
exits 1 train-step -q -m link.tsr -n 1 pairs.tsr
err_has "link.tsr exists and is not a regular file (a symbolic link)"
cmp -s m.tsr real.tsr || fail "training through a link changed its file"
# and with --dev, a MODEL.best in the way, before any training
ln -s nowhere real.tsr.best
exits 1 train-step -q -m real.tsr -n 1 --dev pairs.tsr pairs.tsr
err_has "real.tsr.best exists and is not a regular file (a symbolic link)"
cmp -s m.tsr real.tsr || fail "a refused training changed the model"
[ -L real.tsr.best ] || fail "the link real.tsr.best replaced"
exit 0
