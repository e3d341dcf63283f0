# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache: GNU Make, no configure step.
#   make            build/pagecache (libpagecache and liburing linked in statically)
#                   and build/pagecache-bench, the experiments (with SQLite),
#                   which `pagecache bench` runs (src/cmd-bench.c says how)
#   make check      build and run every test (TAP through prove)
#   make demo       build and show the main job on a sample tree it makes
#   make bench      the side-by-side benchmarks (big data; minutes)
#   make install    PREFIX=/usr/local DESTDIR=
#   SANITIZE=1      build with ASan+UBSan (objects under build/san)
#   BUILD=DIR       build under DIR instead (two builds side by side)
# What the build needs beyond gcc and make is installed here when missing,
# on Debian as root, through apt-get (see deps).

PREFIX  ?= /usr/local
DESTDIR ?=
# GNU's directory variables (make install prefix=/usr ...)
prefix  ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir  ?= $(exec_prefix)/bin
libexecdir ?= $(exec_prefix)/libexec
CC      ?= cc
V       ?= 0

ifeq ($(SANITIZE),1)
B       := $(or $(BUILD),build/san)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
B       := $(or $(BUILD),build)
SANFLAGS :=
endif

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -pthread $(SANFLAGS)
# One direction: bench/ -> src/ -> lib/; only bench/ sees bench/'s headers.
CPPFLAGS += -Iinclude -Ilib -Isrc -I$(B)
LDFLAGS += -pthread $(SANFLAGS)
# liburing and zlib go in statically, so the binary runs where they are
# absent. Looked up when linking (deps may have just installed them).
static_or = $$(ls /usr/lib/*/lib$(1).a /usr/lib/lib$(1).a /usr/local/lib/lib$(1).a 2>/dev/null | head -n1 | grep . || echo -l$(1))
LIBS    = $(call static_or,uring) $(call static_or,z) -lm
BENCH_LIBS = $(call static_or,sqlite3) -ldl

LIB_SRC := $(wildcard lib/*.c)
CLI_SRC := $(wildcard src/*.c)
# pagecache-bench: the experiments, and what of src/ they speak through
BENCH_SRC := $(filter-out bench/floor-stat.c,$(wildcard bench/*.c)) \
	src/output.c src/messages.c src/targets.c src/state.c
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZERS := profile json

.PHONY: all deps test-deps check demo bench fuzz install clean FORCE
all: deps $(B)/pagecache $(B)/pagecache-bench

# ---- what the build needs -------------------------------------------------
APT := DEBIAN_FRONTEND=noninteractive apt-get
define need
	@if ! $(1) >/dev/null 2>&1; then \
	  echo "pagecache: installing $(2) (missing)"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    ($(APT) update -qq || true) && $(APT) install -y -qq $(2) >/dev/null; \
	  else echo "pagecache: please install $(2) (Debian package names)" >&2; exit 1; fi; \
	fi
endef

deps:
	$(call need,test -e /usr/include/liburing.h,liburing-dev)
	$(call need,test -e /usr/include/zlib.h,zlib1g-dev)
	$(call need,test -e /usr/include/sqlite3.h,libsqlite3-dev)

# every command tests/ calls (grep tests/cli/*.sh); fincore moved to
# util-linux-extra in Debian 12
test-deps: deps
	$(call need,command -v prove,perl)
	$(call need,command -v jq,jq)
	$(call need,command -v fincore,$$(apt-cache show util-linux-extra >/dev/null 2>&1 && echo util-linux-extra || echo util-linux))
	$(call need,command -v setpriv,util-linux)
	$(call need,command -v mkswap,util-linux)
	$(call need,command -v losetup,mount)
	$(call need,command -v timeout,coreutils)
	$(call need,command -v pgrep,procps)
	$(call need,command -v mkfs.ext4,e2fsprogs)
	$(call need,command -v python3,python3)
	$(call need,command -v modprobe,kmod)
	$(call need,test -n "$$(ls /usr/lib/*/libc.a /usr/lib/libc.a 2>/dev/null)",libc6-dev)

# ---- build ---------------------------------------------------------------
$(B)/%.o: %.c include/pagecache.h $(wildcard lib/*.h src/*.h bench/*.h) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(B)/bench/%.o: CPPFLAGS += -Ibench

# where `pagecache bench` looks for pagecache-bench; rewritten only when
# they change, so that `make install prefix=/usr` rebuilds what needs it
$(B)/paths.h: FORCE
	@mkdir -p $(B)
	@printf '#define PC_BINDIR "%s"\n#define PC_LIBEXECDIR "%s"\n' '$(bindir)' '$(libexecdir)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(B)/src/cmd-bench.o: $(B)/paths.h
FORCE:

$(B)/libpagecache.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/pagecache: $(CLI_OBJ) $(B)/libpagecache.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libpagecache.a $(LIBS)

$(B)/pagecache-bench: $(BENCH_OBJ) $(B)/libpagecache.a
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(B)/libpagecache.a $(BENCH_LIBS) $(LIBS)

$(B)/tests/%: tests/unit/%.c tests/unit/tap.h tests/unit/snapcraft.h $(B)/libpagecache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libpagecache.a $(LIBS)

# ---- tests, demo, bench ----------------------------------------------------
REPLAY_BIN := $(FUZZERS:%=$(B)/tests/replay-%)
# prove, each program under a time limit (tests/run-one.sh); then the skips
# per program and a check that nothing was left behind (tests/prove.sh)
PROVE := tests/prove.sh
# Twice: as this kernel is, then as on one without cachestat(2) (before
# 6.5), through the fault seam (lib/sys.c): the CLI tests and the unit tests
# that honour PAGECACHE_FAULT. There, what only cachestat knows (dirty,
# evicted) skips with "no cachestat" and the rest must pass; for time,
# t-overlay skips its nested runs of four other scripts there
# (PC_CHECK_PASS). Both passes run; check fails if either does.
NOCS_FAULT := cachestat:ENOSYS
NOCS_UNIT := $(addprefix $(B)/tests/,test-evict test-residency test-prefetch)
CHECK_ENV = PAGECACHE=$(CURDIR)/$(B)/pagecache MKSNAP=$(CURDIR)/$(B)/tests/mksnap
check: test-deps $(B)/pagecache $(B)/pagecache-bench $(UNIT_BIN) $(B)/tests/mksnap $(REPLAY_BIN)
	rc=0; \
	$(CHECK_ENV) $(PROVE) $(if $(filter 1,$(V)),-v) \
	  $(UNIT_BIN) $(REPLAY_BIN) tests/cli/t-*.sh || rc=1; \
	echo "# make check, second pass: as on a kernel without cachestat (PAGECACHE_FAULT=$(NOCS_FAULT))"; \
	$(CHECK_ENV) PAGECACHE_FAULT=$(NOCS_FAULT) PC_CHECK_PASS=nocachestat $(PROVE) $(if $(filter 1,$(V)),-v) \
	  $(NOCS_UNIT) tests/cli/t-*.sh || rc=1; \
	exit $$rc

demo: deps $(B)/pagecache
	@PAGECACHE=$(CURDIR)/$(B)/pagecache sh tests/demo.sh

bench: deps $(B)/pagecache $(B)/pagecache-bench
	$(call need,command -v vmtouch,vmtouch)
	$(call need,command -v fio,fio)
	PAGECACHE=$(CURDIR)/$(B)/pagecache bash bench/foundation.sh
	PAGECACHE=$(CURDIR)/$(B)/pagecache bash bench/nocache.sh

# libFuzzer harnesses: the snapshot decoder with restore's path handling,
# and the JSON reader (needs clang); FUZZ_SECONDS=60 each by default.
# `make check` replays their corpora (tests/fuzz/replay.c, gcc).
FUZZ_SECONDS ?= 60
fuzz: deps
	$(call need,command -v clang,clang)
	@mkdir -p build/fuzz
	set -e; for h in $(FUZZERS); do \
	  clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -Iinclude -Ilib \
	    -o build/fuzz/fuzz-$$h tests/fuzz/fuzz-$$h.c $(LIB_SRC) $(LIBS); \
	  rm -rf build/fuzz/corpus-$$h; cp -r tests/fuzz/corpus-$$h build/fuzz/corpus-$$h; \
	  build/fuzz/fuzz-$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    -rss_limit_mb=1024 build/fuzz/corpus-$$h; \
	done

$(B)/tests/replay-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(B)/libpagecache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -DCORPUS='"$(CURDIR)/tests/fuzz/corpus-$*"' \
	  -o $@ $< tests/fuzz/replay.c $(B)/libpagecache.a $(LIBS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/pagecache $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/libpagecache.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/pagecache.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf build
