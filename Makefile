# attn: neural machine translation with attention, as small Unix filters.
#
#   make                 programs (build/bin), libtensor.a and libtensor.so
#   make check           check-layers, check-lines, unit tests (Check),
#                        command-line tests
#   make check-layers    the includes against the table of layers
#   make check-lines     no C file under lib/ or cmd/ over 800 lines
#   make SAN=1 check     the same, built with ASan and UBSan (in build-san/)
#   make bench           benchmarks (as ratios to PyTorch's where
#                        make bench-torch has measured them)
#   make bench-torch     PyTorch's figures for the same (bench/torch)
#   make fuzz            libFuzzer targets, one per parser (clang)
#   make check-fullsize  imported models of published sizes against native
#                        Marian (tools/marian-ref/fullsize.sh; not in check)
#   make bench-marian    their speed against native Marian's (also in make
#                        bench; bench/bench_marian_native.sh)
#   make install PREFIX=/usr/local DESTDIR=
#   make demo            translate examples/sample.es with models/bible-es-en.tsr
#
# Every file is found by wildcard: a new .c anywhere under lib/ joins the
# library, cmd/common/*.c the programs' own static library (not installed),
# a new cmd/NAME.c is the program NAME, tests/test_*.c a unit test,
# tests/cli_*.sh a command-line test, bench/bench_*.c a benchmark,
# examples/NAME.c build/examples/NAME (for the examples' scripts).  Files
# named *_avx2.c, *_avx512.c, *_avx512bf16.c, *_avx512vnni.c, *_avxvnni.c,
# *_pclmul.c, *_vpclmul.c and *_f16c.c are compiled for those instruction sets and are
# only called after a run-time check of the CPU.  Sources include across
# folders by their path under lib/ ("stream/tensor.h"), within a folder
# by name; doc/ARCHITECTURE.md has the layers.

VERSION  = 0.1.0

# Builds run in parallel, one job per core, unless make is given -j (a
# sub-make shares its parent's jobs).  make clean never runs beside a build.
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
ifneq ($(filter clean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif
PREFIX  ?= /usr/local
DESTDIR ?=

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WARN     = -Wall -Wextra -Wno-unused-parameter
CPPFLAGS_ALL = -Ilib -Icmd -D_GNU_SOURCE -DATTN_VERSION='"$(VERSION)"'
CFLAGS_ALL   = -std=c11 -fPIC -pthread $(WARN) $(CFLAGS)
# Each compilation writes the headers it read to a .d file beside its
# output (-MMD; -MP adds an empty rule per header, so a header removed
# does not stop the build): touching a header rebuilds only what
# includes it.
DEPFLAGS     = -MMD -MP
LDLIBS_ALL   = -lz -lm -pthread

ifeq ($(SAN),1)
BUILD       ?= build-san
SANFLAGS     = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS_ALL  += $(SANFLAGS)
LDFLAGS     += $(SANFLAGS)
else
BUILD       ?= build
endif

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt)

LIB_SRC   = $(sort $(shell find lib -name '*.c'))
LIB_OBJ   = $(LIB_SRC:%.c=$(BUILD)/%.o)
COMMON_SRC = $(sort $(wildcard cmd/common/*.c))
COMMON_OBJ = $(COMMON_SRC:%.c=$(BUILD)/%.o)
CMD_SRC   = $(sort $(wildcard cmd/*.c))
PROGS     = $(CMD_SRC:cmd/%.c=$(BUILD)/bin/%)
TEST_SRC  = $(sort $(wildcard tests/test_*.c))
TESTS     = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TESTLIB_SRC = $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJ = $(TESTLIB_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC = $(sort $(wildcard bench/bench_*.c))
BENCHES   = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# the examples' programs (examples/*.c), for their scripts; not installed
EXAMPLE_SRC = $(sort $(wildcard examples/*.c))
EXAMPLES  = $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)
HEADERS   = $(shell find lib cmd/common -name '*.h')
# libtensor's public interface: tensors, the stream format, the kernels
PUBLIC_HEADERS = lib/stream/tensor.h lib/stream/stream.h lib/kernels/kernels.h \
		 lib/base/errmsg.h
MANPAGES  = $(wildcard man/man1/*.1 man/man5/*.5 man/man7/*.7)

STATIC = $(BUILD)/libtensor.a
COMMON = $(BUILD)/libcmd.a
SHARED = $(BUILD)/libtensor.so.0

all: $(PROGS) $(STATIC) $(SHARED) $(BUILD)/libtensor.pc $(EXAMPLES)

# Before the first compilation: a compiler that finds zlib, or one message
# naming the package to install (tools/need.sh), not an error per file.
$(BUILD)/need-build.ok:
	@CC='$(CC)' sh tools/need.sh build
	@mkdir -p $(@D) && touch $@
$(LIB_OBJ) $(COMMON_OBJ) $(TESTLIB_OBJ) $(PROGS) $(TESTS) $(BENCHES) \
$(EXAMPLES): \
	| $(BUILD)/need-build.ok

$(BUILD)/%_avx2.o: %_avx2.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx2 -mfma -mf16c -c $< -o $@

$(BUILD)/%_avx512.o: %_avx512.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -c $< -o $@

$(BUILD)/%_avx512bf16.o: %_avx512bf16.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512bf16 -mavx2 -mfma -c $< -o $@

$(BUILD)/%_avx512vnni.o: %_avx512vnni.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni -mavx2 -mfma -c $< -o $@

$(BUILD)/%_avxvnni.o: %_avxvnni.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx2 -mfma -mavxvnni -c $< -o $@

$(BUILD)/%_f16c.o: %_f16c.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx -mf16c -c $< -o $@

$(BUILD)/%_pclmul.o: %_pclmul.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mpclmul -msse4.1 -c $< -o $@

$(BUILD)/%_vpclmul.o: %_vpclmul.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -mavx512f -mvpclmulqdq -mpclmul -msse4.1 -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/tests/lib/%.o: tests/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) -Itests/lib $(CFLAGS_ALL) $(CHECK_CFLAGS) -c $< -o $@

# libtensor.so exports only the public interface, what the public headers
# declare between their "#pragma GCC visibility" lines; the programs,
# tests and benchmarks link libtensor.a, where every function is visible.
$(LIB_OBJ): CFLAGS_ALL += -fvisibility=hidden

$(STATIC): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(COMMON): $(COMMON_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libtensor.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
	ln -sf libtensor.so.0 $(BUILD)/libtensor.so

# The PREFIX and VERSION the .pc says, rewritten only when they differ:
# make install PREFIX=/opt/x after a plain make makes the .pc again.
PC_VARS = prefix=$(PREFIX) version=$(VERSION)
$(BUILD)/libtensor.pc.vars: FORCE
	@mkdir -p $(@D)
	@echo '$(PC_VARS)' | cmp -s - $@ || echo '$(PC_VARS)' > $@

$(BUILD)/libtensor.pc: libtensor.pc.in $(BUILD)/libtensor.pc.vars
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

$(BUILD)/bin/%: cmd/%.c $(COMMON) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) -MF $@.d -MT $@ $(CFLAGS_ALL) $(LDFLAGS) $< $(COMMON) $(STATIC) $(COMMON) $(LDLIBS_ALL) -o $@

$(BUILD)/tests/%: tests/%.c $(COMMON) $(STATIC) $(TESTLIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) -MF $@.d -MT $@ -Itests/lib $(CFLAGS_ALL) $(CHECK_CFLAGS) $(LDFLAGS) $< $(TESTLIB_OBJ) $(COMMON) $(STATIC) $(COMMON) $(CHECK_LIBS) $(LDLIBS_ALL) -o $@

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) -MF $@.d -MT $@ $(CFLAGS_ALL) $(LDFLAGS) $< $(STATIC) $(LDLIBS_ALL) -o $@

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(DEPFLAGS) -MF $@.d -MT $@ $(CFLAGS_ALL) $(LDFLAGS) $< $(STATIC) $(LDLIBS_ALL) -o $@

# The dependency files of the last build; a target built before has one.
DEPS = $(LIB_OBJ:.o=.d) $(COMMON_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) \
       $(PROGS:=.d) $(TESTS:=.d) $(BENCHES:=.d) $(EXAMPLES:=.d)
-include $(DEPS)
# A target made before its .d file existed (a build tree older than
# -MMD) is made again once: nothing else knows which headers it read.
NODEP = $(foreach t,$(DEPS:.d=),$(if $(wildcard $(t).d),,$(t)))
$(filter $(LIB_OBJ) $(COMMON_OBJ) $(TESTLIB_OBJ),$(NODEP:=.o)) \
$(filter $(PROGS) $(TESTS) $(BENCHES) $(EXAMPLES),$(NODEP)): FORCE

# Every #include "..." of lib/ and cmd/ against the table of layers in
# tools/check-layers.sh.  make check runs it before building: it takes a
# moment and names the file and line, where a build would not fail.
check-layers:
	@sh tools/check-layers.sh

# No .c or .h under lib/ and cmd/ over 800 lines (generated ones exempt:
# tools/check-lines.sh names them); make check runs it with the layers.
check-lines:
	@sh tools/check-lines.sh

# First what the tests need (tools/need.sh names any missing package and
# the apt-get line), then the layers and the files' lengths, then the build
# and the tests.
check:
	@CC='$(CC)' sh tools/need.sh check
	@sh tools/check-layers.sh
	@sh tools/check-lines.sh
	@$(MAKE) --no-print-directory all $(TESTS)
	@BUILD=$(BUILD) SAN=$(SAN) sh tests/run.sh $(TESTS)

# Models of the sizes people download (an OPUS-MT Transformer-base, a
# Firefox student) translated by attn and by native Marian: too large to
# commit, made in build/fullsize (tools/marian-ref/fullsize.sh).
check-fullsize: all
	@sh tools/marian-ref/fullsize.sh

bench: all $(BENCHES)
	@BUILD=$(BUILD) sh bench/run.sh $(BENCHES)

# attn's speed against native Marian's on those models (make bench runs it
# too, when check-fullsize has made them): BENCH_LINES, BENCH_ISAS,
# BENCH_THREADS (bench/bench_marian_native.sh).
bench-marian: all
	@PATH="$(abspath $(BUILD))/bin:$$PATH" sh bench/bench_marian_native.sh

# The same models and workloads in plain PyTorch (Debian's python3-torch
# and libopenblas0-pthread; not part of check or CI), for make bench: on
# the CPU's best kernels in $(BUILD)/bench/torch.txt and, where the CPU
# has more than AVX2 (AVX-512, or AVX-VNNI), held to AVX2 as
# ATTN_KERNELS=avx2-novnni holds attn (an AVX2 core without VNNI, the
# commonest x86 server core) in torch-avx2.txt.  Debian's python3 (another
# python first on PATH lacks torch).
PYTHON ?= /usr/bin/python3
bench-torch: all
	@mkdir -p $(BUILD)/bench
	PATH="$(abspath $(BUILD))/bin:$$PATH" ATTN_KERNELS= $(PYTHON) \
		bench/torch/bench_torch.py --out $(BUILD)/bench/torch.txt
	if grep -qE '^flags.* (avx512f|avx_vnni)' /proc/cpuinfo; then \
	PATH="$(abspath $(BUILD))/bin:$$PATH" ATTN_KERNELS=avx2-novnni $(PYTHON) \
		bench/torch/bench_torch.py --out $(BUILD)/bench/torch-avx2.txt; fi

# The fuzzers need clang's libFuzzer: one target per parser,
# fuzz/fuzz_NAME.c, linked with libtensor built for fuzzing (coverage,
# ASan, UBSan) in build-fuzz/lib.  make fuzz runs each for FUZZ_TIME
# seconds from its seeds, fuzz/corpus/NAME (and fuzz/NAME.dict where there
# is one); the model loaders start from tiny models that train-step and
# align make, and what their own fuzz/corpus/NAME holds.
# What a run finds is left in build-fuzz/crash-*.  tools/need.sh checks
# for clang and libFuzzer first.
FUZZ_TIME ?= 60
FUZZ_CC   ?= clang
FUZZ_FLAGS = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB   = build-fuzz/lib/libtensor.a
FUZZ_NAMES = $(patsubst fuzz/fuzz_%.c,%,$(filter-out fuzz/fuzz_util.c,$(wildcard fuzz/fuzz_*.c)))
FUZZ_BINS  = $(FUZZ_NAMES:%=build-fuzz/fuzz_%)
FUZZ_SEEDS = build-fuzz/seeds/model build-fuzz/seeds/alignmodel

# The vector kernels are no parser's, and with ASan each takes many minutes
# to compile: they are built plain.
build-fuzz/lib/%_avx2.o build-fuzz/lib/%_avx512.o \
build-fuzz/lib/%_avx512bf16.o build-fuzz/lib/%_avx512vnni.o \
build-fuzz/lib/%_avxvnni.o: \
	override CFLAGS = -g -O1

build-fuzz/need-fuzz.ok:
	@FUZZ_CC='$(FUZZ_CC)' sh tools/need.sh fuzz
	@mkdir -p $(@D) && touch $@

# (made by this Makefile again, where it is $(STATIC))
ifneq ($(BUILD),build-fuzz/lib)
$(FUZZ_LIB): $(LIB_SRC) $(HEADERS) | build-fuzz/need-fuzz.ok
	$(MAKE) BUILD=build-fuzz/lib SAN= CC=$(FUZZ_CC) \
	    CFLAGS='$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link' $@
endif

build-fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.c fuzz/fuzz_util.h $(FUZZ_LIB)
	$(FUZZ_CC) $(CPPFLAGS_ALL) -Ifuzz -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer \
	    $< fuzz/fuzz_util.c $(FUZZ_LIB) $(LDLIBS_ALL) -o $@

# A vocabulary of 260 units and a model of each architecture, the
# smallest train-step makes, and the transformer exported as f16 and int8.
build-fuzz/seeds/model: $(BUILD)/bin/train-step $(BUILD)/bin/tokenize
	@rm -rf $@ && mkdir -p $@
	echo x | $(BUILD)/bin/tokenize -l 260 >$@.vocab 2>/dev/null
	$(BUILD)/bin/train-step --init -m $@/rnnsearch.tsr -a rnnsearch \
	    -s $@.vocab -t $@.vocab -S emb=2 -S hidden=2 -S att=2 -S maxout=2
	$(BUILD)/bin/train-step --init -m $@/rnnencdec.tsr -a rnnencdec \
	    -s $@.vocab -t $@.vocab -S emb=2 -S hidden=2 -S maxout=2
	$(BUILD)/bin/train-step --init -m $@/seq2seq.tsr -a seq2seq \
	    -s $@.vocab -t $@.vocab -S emb=2 -S hidden=2 -S layers=2
	$(BUILD)/bin/train-step --init -m $@/tf.tsr -a transformer -s $@.vocab \
	    -t $@.vocab -S d_model=2 -S heads=1 -S ffn=2 -S enc_layers=1 \
	    -S dec_layers=1 -S tie=all
	$(BUILD)/bin/train-step --export $@/tf16.tsr -m $@/tf.tsr
	$(BUILD)/bin/train-step --export $@/tf8.tsr --dtype int8 -m $@/tf.tsr

# Word aligner models of four made-up pairs: --no-fold, the defaults,
# IBM Model 1 without Bayes, and the HMM.
build-fuzz/seeds/alignmodel: $(BUILD)/bin/align
	@rm -rf $@ && mkdir -p $@
	printf 'la casa ||| the house\nla Casa verde ||| the green house\n'\
'casa ||| house\nel libro . ||| the book .\n' >$@.pairs
	$(BUILD)/bin/align -q -t --no-fold -o $@/nofold.tsr <$@.pairs
	$(BUILD)/bin/align -q -t -I 2 -o $@/fold.tsr <$@.pairs
	$(BUILD)/bin/align -q -t --no-diagonal -a 0 -o $@/model1.tsr <$@.pairs
	$(BUILD)/bin/align -q -t -I 2 -H 2 -o $@/hmm.tsr <$@.pairs

fuzz: $(FUZZ_BINS) $(FUZZ_SEEDS)
	@for t in $(FUZZ_NAMES); do \
	    mkdir -p build-fuzz/corpus/$$t; \
	    seeds=fuzz/corpus/$$t; \
	    case $$t in model|alignmodel) seeds=build-fuzz/seeds/$$t; \
	        [ -d fuzz/corpus/$$t ] && seeds="$$seeds fuzz/corpus/$$t";; esac; \
	    dict=; [ -f fuzz/$$t.dict ] && dict=-dict=fuzz/$$t.dict; \
	    echo "fuzz_$$t: $(FUZZ_TIME) s"; \
	    build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	        -artifact_prefix=build-fuzz/ $$dict build-fuzz/corpus/$$t $$seeds \
	        || exit 1; done

# The main command: builds everything, then translates examples/sample.es
# with the trained model in models/ (examples/bible-transformer.sh made it;
# nothing is trained here) and prints each line with its translation.
DEMO_MODEL = models/bible-es-en.tsr
DEMO_TEXT  = examples/sample.es
demo: all
	@m=$(DEMO_MODEL); PATH=$(BUILD)/bin:$$PATH; \
	tokenize -m $$m $(DEMO_TEXT) | embed -m $$m | encode -m $$m | \
	    attend -m $$m | beam -m $$m > $(BUILD)/demo.en && \
	awk 'NR == FNR { en[FNR] = $$0; next } \
	    { print "es: " $$0; print "en: " en[FNR]; print "" }' \
	    $(BUILD)/demo.en $(DEMO_TEXT)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/attn $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib
	ln -sf libtensor.so.0 $(DESTDIR)$(PREFIX)/lib/libtensor.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/attn
	install -m 644 $(BUILD)/libtensor.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig
	for f in $(MANPAGES); do \
	    install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/$$(basename $$(dirname $$f)); done

clean:
	rm -rf build build-san build-fuzz

.PHONY: all check check-layers check-lines check-fullsize bench bench-marian bench-torch fuzz install clean demo FORCE
FORCE:
.SECONDARY:
