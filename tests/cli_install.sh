#!/bin/sh
# The installed library as a consumer sees it: make install DESTDIR=T
# PREFIX=/opt/attn of the tree just built (nothing rebuilt, but the .pc
# made again for that PREFIX), then a small C program that includes
# <attn/stream.h>, <attn/kernels.h>, <attn/errmsg.h> and the system's
# <err.h>, built with pkg-config's flags from T and run against the
# installed libtensor.so: it writes a tensor to a stream file and reads it
# back, multiplies two matrices, and calls warnx().  libtensor.so exports
# exactly the functions the installed headers declare, and nothing of the
# programs (die, progname, warnx_, usage_error, ...).
set -u
. "$(dirname "$0")/lib/cli.sh"
BUILD=${BUILD:-build}
case $BUILD in /*) build=$BUILD ;; *) build=$root/$BUILD ;; esac
errors=0
sh "$root/tools/need.sh" cc make pkg-config nm || exit 1

# The install, by the Makefile, of this build (SAN as it was built; the
# make running the tests, if any, is not this make's parent).
ls -l --time-style=full-iso "$build/libtensor.so.0" "$build/libtensor.a" \
    >"$T/before" 2>&1
(unset MAKEFLAGS MFLAGS MAKELEVEL; cd "$root" &&
	make install BUILD="$BUILD" SAN="${SAN:-}" PREFIX=/opt/attn \
	DESTDIR="$T/root") >"$T/log" 2>&1 || {
	cat "$T/log" >&2
	fail "make install failed"
	exit 1
}
ls -l --time-style=full-iso "$build/libtensor.so.0" "$build/libtensor.a" \
    >"$T/after" 2>&1
cmp -s "$T/before" "$T/after" || fail "make install rebuilt the library"
P=$T/root/opt/attn
for f in include/attn/tensor.h include/attn/stream.h include/attn/kernels.h \
    include/attn/errmsg.h lib/libtensor.so.0 lib/libtensor.so lib/libtensor.a \
    lib/pkgconfig/libtensor.pc; do
	[ -e "$P/$f" ] || fail "$f not installed"
done
[ -e "$P/include/err.h" ] && fail "an err.h installed where it hides <err.h>"
grep -qx 'prefix=/opt/attn' "$P/lib/pkgconfig/libtensor.pc" ||
	fail "the .pc does not say prefix=/opt/attn: $(head -n 1 \
	    "$P/lib/pkgconfig/libtensor.pc")"

# The exported functions: exactly those the installed headers declare
# (gcc -aux-info lists every function a file declares, with its header).
printf '#include <attn/%s>\n' tensor.h stream.h kernels.h errmsg.h >"$T/pub.c"
cc -I"$P/include" -fsyntax-only -aux-info "$T/pub.aux" "$T/pub.c" ||
	fail "the installed headers do not compile"
grep "^/\* $P/include/attn/" "$T/pub.aux" | grep -v ' static ' |
	sed 's/ *(.*//; s/.*[ *]//' | LC_ALL=C sort -u >"$T/declared"
nm -D --defined-only "$P/lib/libtensor.so" | awk '$2 ~ /^[TWDBR]$/ { print $3 }' |
	LC_ALL=C sort -u >"$T/exported"
[ "$(wc -l <"$T/declared")" -ge 80 ] ||
	fail "only $(wc -l <"$T/declared") functions found in the headers"
cmp -s "$T/declared" "$T/exported" || {
	fail "exported functions differ from the declared ones (< declared, > exported):"
	diff "$T/declared" "$T/exported" >&2
}
nm -D "$P/lib/libtensor.so" | awk '{ print $NF }' |
	grep -xE 'die|progname|warnx_|usage_error|prog_[a-z_]*|opt_[a-z_0-9]*' \
	>"$T/prog" && fail "libtensor.so names program symbols: $(cat "$T/prog")"

cat >"$T/consumer.c" <<'END'
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <attn/stream.h>
#include <attn/kernels.h>
#include <attn/errmsg.h>

int main(int argc, char **argv)
{
	struct tensor t, u;
	struct tsr_writer *w;
	struct tsr_reader *r;
	uint64_t dim[2] = { 2, 3 };
	float x[6] = { 1, -2.5f, 3, 0.25f, 5e6f, -6 };
	float a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 }, c[4];
	int end, i;

	if (argc != 3)
		errx(2, "usage: consumer FILE MISSING");
	if (tensor_init_copy(&t, "x.y", DT_F32, 2, dim, x) < 0)
		errx(1, "%s", err_msg());
	if ((w = tsr_writer_atomic(argv[1], 6)) == NULL ||
	    tsr_write(w, &t, 7, 1) < 0 || tsr_writer_finish(w) < 0)
		errx(1, "%s", err_msg());
	if ((r = tsr_reader_path(argv[1])) == NULL)
		errx(1, "%s", err_msg());
	if (tsr_read(r, &u, &end) != 1)
		errx(1, "read: %s", err_msg());
	printf("%s %s [%llu,%llu] frame %llu end %d:", u.name,
	    dtype_name(u.dtype), (unsigned long long)u.dim[0],
	    (unsigned long long)u.dim[1], (unsigned long long)u.frame, end);
	for (i = 0; i < 6; i++)
		printf(" %g", ((float *)u.data)[i]);
	printf("\nsame bytes: %d\n", memcmp(u.data, x, sizeof x) == 0);
	tensor_free(&u);
	printf("then: %d\n", tsr_read(r, &u, &end));
	printf("end marks: %d\n", (int)tsr_reader_marks(r, NULL));
	tsr_reader_free(r);
	tensor_free(&t);

	sgemm(0, 0, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2);
	printf("sgemm: %g %g %g %g\n", c[0], c[1], c[2], c[3]);
	printf("bf16(1.5): %#x\n", f32_to_bf16(1.5f));

	if (tsr_reader_path(argv[2]) != NULL)
		errx(1, "%s opened", argv[2]);
	printf("missing: %s\n", strstr(err_msg(), argv[2]) ? "named" : err_msg());
	warnx("warnx from <err.h>");
	return 0;
}
END
san=
[ "${SAN:-}" = 1 ] && san="-fsanitize=address,undefined"
# The .pc names /opt/attn; the sysroot puts pkg-config's paths under T.
export PKG_CONFIG_PATH="$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$T/root"
flags=$(pkg-config --cflags --libs libtensor) || fail "pkg-config libtensor"
for want in "-I$P/include" "-L$P/lib" -ltensor; do
	case " $flags " in
	*" $want "*) ;;
	*) fail "pkg-config --cflags --libs: $flags: no $want" ;;
	esac
done
cc -std=c11 -Wall -Wextra -Werror $san -o "$T/consumer" "$T/consumer.c" \
    $flags 2>"$T/cc" || { fail "consumer build: $(cat "$T/cc")"; exit 1; }
LD_LIBRARY_PATH=$P/lib "$T/consumer" "$T/x.tsr" "$T/missing.tsr" \
    >"$T/out" 2>"$T/err" || fail "consumer: exit $?: $(cat "$T/err")"
cat >"$T/want" <<'END'
x.y f32 [2,3] frame 7 end 1: 1 -2.5 3 0.25 5e+06 -6
same bytes: 1
then: 0
end marks: 1
sgemm: 19 22 43 50
bf16(1.5): 0x3fc0
missing: named
END
cmp -s "$T/out" "$T/want" || { fail "consumer output differs:"; diff "$T/want" "$T/out" >&2; }
grep -qx 'consumer: warnx from <err.h>' "$T/err" ||
	fail "warnx: stderr was: $(cat "$T/err")"
# It ran on the installed library, not on one found elsewhere.
LD_LIBRARY_PATH=$P/lib ldd "$T/consumer" 2>/dev/null |
	grep -q "=> $P/lib/libtensor.so.0 " || fail "consumer not linked to $P/lib"

[ "$errors" -eq 0 ]
