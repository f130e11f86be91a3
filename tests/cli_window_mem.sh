#!/bin/sh
# A window's memory is bounded in bytes, not only in frames: 200 frames of
# 4 MiB each (a zlib record of 4 KiB that inflates to 4 MiB, passed
# through) held 16 x 64 frames deep would take 800 MB; embed -b 64 holds
# at most --window-mem of them (default 64 MiB), and gives the same
# output whatever the window.  The bound: ulimit -v where it can be set;
# sanitizer builds reserve terabytes of address space, so there ASan's
# own RSS limit serves.
set -u
. "$(dirname "$0")/lib/cli.sh"

perro_model m.tsr || exit 1
{
	echo 'tsr-text 1'
	echo 'record src.ids i32 [3] frame 0'
	echo '5 6 2'
	echo 'record pad.x f32 [1024,1024] frame 0 end'
	awk 'BEGIN { for (i = 0; i < 1024; i++) { s = "0"
		for (j = 1; j < 1024; j++) s = s " 0"; print s } }'
} > one.txt
tensordump -r -z 9 one.txt > one.tsr || fail "tensordump -r"
i=0
while [ $i -lt 200 ]; do cat one.tsr; i=$((i + 1)); done > big.tsr
[ "$(wc -c < big.tsr)" -lt 2000000 ] || fail "big.tsr is not small"

run() {	# run KBYTES ARGS...: embed -b 64 within KBYTES of memory
	kb=$1; shift
	lim=
	if (ulimit -v $kb && embed --version) >/dev/null 2>&1; then
		lim="ulimit -v $kb;"
	fi
	# (ASan's quarantine of freed blocks, 256 MB by default, is not the
	# program's: kept small)
	rss="hard_rss_limit_mb=$((kb / 1000)):quarantine_size_mb=8"
	{ ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$rss" \
		sh -c "$lim embed -m m.tsr -b 64 --threads 1 $* < big.tsr"
	  echo $? > status; } | cksum
	[ "$(cat status)" -eq 0 ]
}
a=$(run 500000) || fail "the default window took over 500 MB"
b=$(run 150000 --window-mem 16M) ||
	fail "--window-mem 16M took over 150 MB"
[ "$a" = "$b" ] || fail "the output depends on the window"
c=$(embed -m m.tsr -b 1 --threads 1 < big.tsr | cksum)
[ "$a" = "$c" ] || fail "-b 64 and -b 1 differ"
exit 0
