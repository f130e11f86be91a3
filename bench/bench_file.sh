#!/bin/sh
# A whole file, text to text, as a user's cron job translates it: the
# first LINES (default 10,000) Spanish verses of the Bible corpus's
# training set (speed only: the model has seen them) through tokenize |
# embed | encode | attend | beam with the shipped model
# (models/bible-es-en.tsr) and its default search, in lines per second
# of the wall clock: with ATTN_THREADS=1, with ATTN_THREADS=2, and as two
# one-thread pipelines side by side under GNU parallel (--pipe -k, the
# file cut in two); the three outputs must be the same bytes.  Beside
# it, the rule-based translator a user might pick instead, Debian's
# Apertium (apertium -u spa-eng, from the packages apertium and
# apertium-en-es), on the same file, and both systems' BLEU on the dev
# set (1,076 verses the model never saw).  Wall-clock ratios mean
# something only on an idle machine.  Skipped without the corpus; the
# parallel and Apertium lines say so when their tools are absent.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
m=$root/models/bible-es-en.tsr
lines=${LINES:-10000}
need "$data/train.es" "$data/dev.es" "$data/dev.en"
in_tmp
head -n "$lines" "$data/train.es" > src
n=$(wc -l < src)
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
echo "$n lines, cpu $cpu, kernels ${ATTN_KERNELS:-(best of the CPU)}"

# translate < TEXT > TEXT: the pipeline, the model's defaults
cat > translate <<EOF
#!/bin/sh
tokenize -m "$m" | embed -m "$m" | encode -m "$m" | attend -m "$m" |
	beam -m "$m"
EOF
chmod +x translate

# timed NAME CMD...: runs CMD < src > out.NAME and prints its lines/s
timed() {
	name=$1
	shift
	t0=$(now)
	"$@" < src > "out.$name" || { echo "$name: failed"; exit 1; }
	t=$(echo "$t0 $(now)" | awk '{ print $2 - $1 }')
	echo "$t" > "t.$name"
	[ "$(wc -l < "out.$name")" -eq "$n" ] ||
		{ echo "$name: $(wc -l < "out.$name") lines for $n"; exit 1; }
	awk -v name="$name" -v t="$t" -v n="$n" 'BEGIN {
		printf "%-28s %7.1f s  %7.1f lines/s\n", name, t, n / t }'
}

ATTN_THREADS=1 timed "attn, 1 thread" ./translate
ATTN_THREADS=2 timed "attn, 2 threads" ./translate
cmp -s "out.attn, 1 thread" "out.attn, 2 threads" ||
	{ echo "2 threads translate otherwise than 1"; exit 1; }
awk '{ v[NR] = $1 } END { printf "2 threads: %.2fx one thread " \
	"(goal 1.8x)\n", v[1] / v[2] }' "t.attn, 1 thread" "t.attn, 2 threads"
if command -v parallel > /dev/null; then
	half=$(( (n + 1) / 2 ))
	ATTN_THREADS=1 timed "attn, parallel 2 x 1 thread" \
		parallel --will-cite --pipe -k -N "$half" -j 2 ./translate
	cmp -s "out.attn, 1 thread" "out.attn, parallel 2 x 1 thread" ||
		{ echo "parallel translates otherwise"; exit 1; }
	awk '{ v[NR] = $1 } END { printf "parallel 2 x 1 thread: %.2fx " \
	    "one thread\n", v[1] / v[2] }' "t.attn, 1 thread" \
	    "t.attn, parallel 2 x 1 thread"
else
	echo "GNU parallel absent: its line not measured"
fi
apertium=
if command -v apertium > /dev/null && apertium -l 2>/dev/null |
    grep -qx ' *spa-eng'; then
	apertium=1
	timed "apertium spa-eng" apertium -u spa-eng
	awk '{ v[NR] = $1 } END { printf "attn, 1 thread: %.2fx " \
	    "Apertium'"'"'s lines/s\n", v[2] / v[1] }' \
	    "t.attn, 1 thread" "t.apertium spa-eng"
else
	echo "Apertium's spa-eng absent (apt-get install apertium" \
	     "apertium-en-es): not measured"
fi

# quality beside speed: BLEU on the dev set
./translate < "$data/dev.es" > dev.attn
printf 'dev BLEU: attn %s' "$(bleu -b "$data/dev.en" < dev.attn)"
if [ -n "$apertium" ]; then
	apertium -u spa-eng < "$data/dev.es" > dev.apertium
	printf ', Apertium %s' "$(bleu -b "$data/dev.en" < dev.apertium)"
fi
echo
