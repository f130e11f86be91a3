# cputime.sh: sourced (. cputime.sh) by examples/story.sh, and by the
# benchmarks (bench/lib.sh), for the CPU time that a machine shared with
# other work does not inflate, without /usr/bin/time.

# cputime T0 T1: the CPU seconds (user + system, to the millisecond) of
# the shell's children that ended between two outputs of the builtin
# times, written by the caller to the files T0 and T1 (times > T0).  The
# caller runs times itself: within $(...) it would count the subshell's
# children, not the shell's.
cputime() {
	awk 'FNR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
		t[++n] = u[1] * 60 + u[2] + s[1] * 60 + s[2] }
	     END { printf "%.3f\n", t[2] - t[1] }' "$1" "$2"
}
