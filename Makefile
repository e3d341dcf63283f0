# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache: GNU Make, no configure step.
#   make            build/pagecache, the everyday program (liburing and zlib
#                   linked in: LINK=static); build/pagecache-bench, the
#                   experiments (with SQLite), which `pagecache bench` runs
#                   (src/commands/cmd-bench.c says how); libpagecache.a, libpagecache.so.0
#                   and pagecache.pc. It never installs anything: liburing,
#                   zlib and sqlite3 are found through pkg-config, and what is
#                   missing is named (make deps installs it)
#   make deps       install what the build needs (Debian, as root: apt-get)
#   make check      make deps, the tests' tools too, then build and run every
#                   test (TAP through prove); check-only: without installing;
#                   T='t-stat test-walk': only these (tests/cli/t-*.sh,
#                   tests/unit/test-*.c, named without the extension)
#   make check-vm   the kernel, cgroup and systemd tests in a Debian 12 guest
#                   (qemu; tests/vm/, docs/testing.md)
#   make demo       make deps, build, and show the main job on a sample tree
#   make bench      the side-by-side benchmarks (big data; minutes)
#   make install    DESTDIR= prefix=/usr/local (or PREFIX=), and GNU's bindir,
#                   libdir, libexecdir, includedir, mandir, datarootdir,
#                   sysconfdir, ...; unitdir= for the systemd units,
#                   ocihookdir= for the OCI hook (docs/containers.md)
#   make package-check  the Debian packages from a clean clone, then lintian
#   make check-container  make check (CONTAINER_CMD=...: another) as root in a
#                   Debian 12 container with the tree on an overlay root
#   LINK=static     (the default) liburing, zlib and SQLite go into the programs,
#                   which then run where those are absent
#   LINK=shared     the system's shared libraries, and pagecache against
#                   libpagecache.so.0: what a distribution ships (debian/rules)
#   SANITIZE=1      build with ASan+UBSan (objects under build/san)
#   BUILD=DIR       build under DIR instead (two builds side by side)

PREFIX  ?= /usr/local
DESTDIR ?=
# GNU's directory variables (make install prefix=/usr libdir=/usr/lib/x86_64-linux-gnu)
prefix  ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir  ?= $(exec_prefix)/bin
libdir  ?= $(exec_prefix)/lib
libexecdir ?= $(exec_prefix)/libexec
includedir ?= $(prefix)/include
datarootdir ?= $(prefix)/share
datadir ?= $(datarootdir)
mandir  ?= $(datarootdir)/man
man1dir ?= $(mandir)/man1
man3dir ?= $(mandir)/man3
man5dir ?= $(mandir)/man5
man8dir ?= $(mandir)/man8
pkgconfigdir ?= $(libdir)/pkgconfig
bashcompdir ?= $(datarootdir)/bash-completion/completions
zshcompdir ?= $(datarootdir)/zsh/vendor-completions
# /etc for a distribution's prefix=/usr (GNU's $(prefix)/etc would say /usr/etc)
sysconfdir ?= $(if $(filter /usr,$(prefix)),/etc,$(prefix)/etc)
INSTALL ?= install
CC      ?= cc
PKG_CONFIG ?= pkg-config
LINK    ?= static
V       ?= 0

ifeq ($(SANITIZE),1)
B       := $(or $(BUILD),build/san)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
B       := $(or $(BUILD),build)
SANFLAGS :=
endif

VERSION := $(shell sed -n 's/^\#define PC_VERSION "\(.*\)"/\1/p' include/pagecache.h)
SOVERSION := 0
SONAME  := libpagecache.so.$(SOVERSION)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -pthread $(SANFLAGS)
# One direction: bench/ -> src/ -> lib/; only bench/ sees bench/'s headers.
CPPFLAGS += -Iinclude -Ilib -Isrc -I$(B)
LDFLAGS += -pthread $(SANFLAGS)

# ---- the libraries, through pkg-config ---------------------------------------
# Asked when this file is read; make check and make demo read it again after
# make deps (a make of their own), so what deps just installed is found.
pkgq = $(shell $(PKG_CONFIG) $(1) 2>/dev/null)
LIB_PKGS := liburing zlib libtraceevent
# fuse3: bench swapin's slow swap device (bench/slowdev.c), in pagecache-bench only
BENCH_PKGS := sqlite3 fuse3 $(LIB_PKGS)
# pagecache's own, not the library's: SHA-256 for push and pull (nettle)
CLI_PKGS := nettle
# libsystemd: the library asks systemd for a delegated scope over D-Bus
# (lib/scope.c), with libsystemd.so.0 opened at run time (dlopen): only its
# headers are needed here, and nothing links it but test-scope (Debian
# ships no libsystemd.a, so a static program could not take it)
SD_PKGS := libsystemd
# libsmartcols: the fincore personality's table, raw lines and JSON are
# util-linux's own (src/commands/cmd-fincore.c says why). Always linked
# dynamically: Debian ships no libsmartcols.a, and libsmartcols1 is on
# every Debian system (util-linux, which is essential, needs it)
SCOLS_PKGS := smartcols
PKG_CFLAGS := $(call pkgq,--cflags $(BENCH_PKGS) $(CLI_PKGS) $(SD_PKGS) $(SCOLS_PKGS))
# static_libs PKGS: their archives, and dynamically what they need beyond
# each other (pkg-config --static: sqlite3's -lm, ...)
static_libs = $(call pkgq,--libs-only-L $(1)) -Wl,-Bstatic $(call pkgq,--libs-only-l $(1)) \
	-Wl,-Bdynamic $(filter-out $(call pkgq,--libs-only-l $(1)),$(call pkgq,--static --libs-only-l $(1)))
ifeq ($(LINK),static)
LIBS    := $(call static_libs,$(LIB_PKGS)) -lm
BENCH_LIBS := $(call static_libs,$(BENCH_PKGS)) -lm
CLI_LIBS := $(call static_libs,$(CLI_PKGS))
else ifeq ($(LINK),shared)
LIBS    := $(call pkgq,--libs $(LIB_PKGS)) -lm
BENCH_LIBS := $(call pkgq,--libs $(BENCH_PKGS)) -lm
CLI_LIBS := $(call pkgq,--libs $(CLI_PKGS))
else
$(error LINK=$(LINK): static or shared)
endif
SD_LIBS := $(call pkgq,--libs $(SD_PKGS))
CLI_LIBS += $(call pkgq,--libs $(SCOLS_PKGS))
# systemd's units (deploy/systemd/): under the prefix, which systemd reads
# for /usr/local; for prefix=/usr, where systemd.pc says (/lib/systemd/system
# on Debian 12, /usr/lib/systemd/system after it)
ifeq ($(origin unitdir),undefined)
unitdir := $(if $(filter /usr,$(prefix)),$(or $(call pkgq,--variable=systemdsystemunitdir systemd),/usr/lib/systemd/system),$(prefix)/lib/systemd/system)
endif
# the OCI hook's definition (deploy/oci/): where podman and CRI-O read them
# for prefix=/usr (oci-hooks(5)); under /usr/local neither looks unless told
# (hooks_dir), so ocihookdir=/etc/containers/oci/hooks.d puts it where both do
ocihookdir ?= $(datadir)/containers/oci/hooks.d
# libpagecache.so.0 always takes the shared ones
SO_LIBS := $(call pkgq,--libs $(LIB_PKGS)) -lm
CPPFLAGS += $(PKG_CFLAGS)

# lib/'s sources that are no part of libpagecache (not in pagecache.h, never
# installed): the JSON reader (pull's manifests, bench's results) and bench's
# statistics, in an archive of the build's own that pagecache,
# pagecache-bench and the tests link. Their sources stay in lib/, under the
# library's licence, and keep its rules (never print, never exit).
INTERNAL_SRC := lib/json.c lib/stats.c
LIB_SRC := $(filter-out $(INTERNAL_SRC),$(wildcard lib/*.c))
CLI_SRC := $(wildcard src/*.c src/*/*.c)
# pagecache-bench: the experiments, and what of src/ they speak through (the
# programs of their own in bench/, built by hand as they say, left out)
BENCH_SRC := $(filter-out bench/floor-stat.c bench/snapshot-columns.c bench/snapshot-encodings.c,$(wildcard bench/*.c)) \
	src/output/output.c src/output/messages.c src/options/targets.c src/state.c src/options/opts.c src/options/bench-opts.c
# layers.c reads containers/storage's layers.json with the JSON reader: in
# the library, layers.o is that and the reader in one object, the reader's
# symbols made local to it, so neither libpagecache.so nor libpagecache.a
# offers pc_json_* to anyone (a program that has its own sees no clash)
LIB_OBJ := $(patsubst $(B)/lib/layers.o,$(B)/lib/layers+json.o,$(LIB_SRC:%.c=$(B)/%.o))
INTERNAL_OBJ := $(INTERNAL_SRC:%.c=$(B)/%.o)
INTERNAL_LIB := $(B)/libpcinternal.a
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZERS := profile json
PROGRAMS := $(B)/pagecache $(B)/pagecache-bench
# bash and zsh completions, written by the program from its option tables
COMPLETIONS := $(B)/completion/pagecache $(B)/completion/_pagecache
LIBRARIES := $(B)/libpagecache.a $(B)/$(SONAME) $(B)/libpagecache.so $(B)/pagecache.pc
# the systemd units, with the install's paths put in (deploy/systemd/*.in)
UNITS := $(patsubst deploy/systemd/%.in,%,$(wildcard deploy/systemd/*.in))
UNIT_FILES := $(UNITS:%=$(B)/systemd/%)
# the OCI hook for podman and CRI-O, with the program's path put in
HOOK_FILE := $(B)/oci/pagecache.json
# the drop-in personalities (src/main.c's table): make install puts a link
# named as each tool in $(libexecdir)/pagecache, off PATH, for a package's
# update-alternatives to point /usr/bin/vmtouch at (docs/compat.md)
PERSONALITIES := vmtouch fincore

.PHONY: all deps test-deps check check-only check-vm demo bench fuzz install uninstall clean \
	have-libs package-check check-container completion FORCE
all: $(PROGRAMS) $(LIBRARIES) $(COMPLETIONS) $(UNIT_FILES) $(HOOK_FILE)
completion: $(COMPLETIONS)

# ---- what the build needs -------------------------------------------------
# Only deps, test-deps (make check, make demo, make bench) install: as root,
# on Debian, with apt-get. A plain make or make install never does.
# (install waits up to 10 minutes for dpkg's lock, held by another apt-get
# such as unattended-upgrades on a freshly booted Debian machine, rather than
# failing; a refused update is let go, as before)
APT := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600
define need
	@if ! $(1) >/dev/null 2>&1; then \
	  echo "pagecache: installing $(2) (missing)"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    ($(APT) update -qq || true) && $(APT) install -y -qq $(2) >/dev/null; \
	  else echo "pagecache: please install $(2) (Debian package names)" >&2; exit 1; fi; \
	fi
endef

deps:
	$(call need,command -v $(PKG_CONFIG),pkg-config)
	$(call need,$(PKG_CONFIG) --exists liburing,liburing-dev)
	$(call need,$(PKG_CONFIG) --exists zlib,zlib1g-dev)
	$(call need,$(PKG_CONFIG) --exists libtraceevent,libtraceevent-dev)
	$(call need,$(PKG_CONFIG) --exists sqlite3,libsqlite3-dev)
	$(call need,$(PKG_CONFIG) --exists nettle,nettle-dev)
	$(call need,$(PKG_CONFIG) --exists fuse3,libfuse3-dev)
	$(call need,$(PKG_CONFIG) --exists libsystemd,libsystemd-dev)
	$(call need,$(PKG_CONFIG) --exists smartcols,libsmartcols-dev)

# what a build needs, said before the first compiler error would
have-libs:
	@$(PKG_CONFIG) --exists $(BENCH_PKGS) $(CLI_PKGS) $(SD_PKGS) $(SCOLS_PKGS) 2>/dev/null || { \
	  echo "pagecache: the build needs pkg-config and liburing, zlib, libtraceevent, sqlite3,"; \
	  echo "  nettle, fuse3, libsystemd and libsmartcols with their headers (Debian: pkg-config"; \
	  echo "  liburing-dev zlib1g-dev libtraceevent-dev libsqlite3-dev nettle-dev libfuse3-dev"; \
	  echo "  libsystemd-dev libsmartcols-dev);"; \
	  echo "  'make deps' installs them as root"; exit 1; } >&2

# every command tests/ calls (grep tests/cli/*.sh); fincore moved to
# util-linux-extra in Debian 12; chromium renders bench report's HTML in
# t-report.sh (about 90 s to install once, about 5 s of make check)
test-deps: deps
	$(call need,command -v prove,perl)
	$(call need,command -v jq,jq)
	$(call need,command -v fincore,$$(apt-cache show util-linux-extra >/dev/null 2>&1 && echo util-linux-extra || echo util-linux))
	$(call need,command -v setpriv,util-linux)
	$(call need,command -v vmtouch,vmtouch)
	$(call need,command -v nocache,nocache)
	$(call need,command -v mkswap,util-linux)
	$(call need,command -v losetup,mount)
	$(call need,command -v timeout,coreutils)
	$(call need,command -v strace,strace)
	$(call need,command -v pgrep,procps)
	$(call need,command -v mkfs.ext4,e2fsprogs)
	$(call need,command -v python3,python3)
	$(call need,command -v zsh,zsh)
	$(call need,command -v tmux,tmux)
	$(call need,command -v modprobe,kmod)
	$(call need,command -v promtool,prometheus)
	$(call need,command -v iconv,libc-bin)
	$(call need,command -v prometheus-node-exporter,prometheus-node-exporter)
	$(call need,command -v curl,curl)
	$(call need,command -v systemd-analyze,systemd)
	$(call need,/usr/bin/python3 -c 'import yaml',python3-yaml)
	$(call need,/usr/bin/python3 -c 'import kubernetes',python3-kubernetes)
	$(call need,command -v skopeo,skopeo)
	$(call need,command -v docker-registry,docker-registry)
	$(call need,test -n "$$(ls /usr/lib/*/libc.a /usr/lib/libc.a 2>/dev/null)",libc6-dev)
	$(call need,command -v chromium,chromium)
	$(call need,test -x /usr/bin/time,time)
	$(call need,command -v podman,podman)
	$(call need,command -v runc,runc)
	$(call need,command -v sqlite3,sqlite3)

# ---- build ---------------------------------------------------------------
$(B)/%.o: %.c include/pagecache.h $(wildcard lib/*.h src/*.h src/*/*.h bench/*.h) | have-libs
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(B)/bench/%.o: CPPFLAGS += -Ibench
# libpagecache: position-independent, for the .so and the .a alike, and
# only what include/pagecache.h declares is visible outside it
$(B)/lib/%.o: CFLAGS += -fPIC -fvisibility=hidden

# where `pagecache bench` looks for pagecache-bench; rewritten only when
# they change, so that `make install prefix=/usr` rebuilds what needs it
$(B)/paths.h: FORCE
	@mkdir -p $(B)
	@printf '#define PC_BINDIR "%s"\n#define PC_LIBEXECDIR "%s"\n' '$(bindir)' '$(libexecdir)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(B)/src/commands/cmd-bench.o: $(B)/paths.h
FORCE:

# the units and the OCI hook name the program and its config by the paths of
# this make (as paths.h and the .pc do): make install prefix=/usr after a
# plain make installs units and a hook that run /usr/bin/pagecache
define with_paths
	@mkdir -p $(dir $@)
	@sed -e 's|@bindir@|$(bindir)|g' -e 's|@sysconfdir@|$(sysconfdir)|g' $< >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
endef
$(B)/systemd/%: deploy/systemd/%.in FORCE
	$(with_paths)
$(B)/oci/%: deploy/oci/%.in FORCE
	$(with_paths)

OBJCOPY ?= objcopy
$(B)/lib/layers+json.o: $(B)/lib/layers.o $(B)/lib/json.o
	$(CC) -r -nostdlib -o $@.tmp $^
	$(OBJCOPY) -w --localize-symbol='pc_json_*' $@.tmp $@
	@rm -f $@.tmp

$(B)/libpagecache.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(INTERNAL_LIB): $(INTERNAL_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# SONAME libpagecache.so.0; the file is libpagecache.so.VERSION
$(B)/libpagecache.so.$(VERSION): $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -o $@ $(LIB_OBJ) $(SO_LIBS)
$(B)/$(SONAME): $(B)/libpagecache.so.$(VERSION)
	ln -sf $(notdir $<) $@
$(B)/libpagecache.so: $(B)/$(SONAME)
	ln -sf $(notdir $<) $@

# pkg-config --libs pagecache, for programs built against the installed
# library; like paths.h, rewritten whenever the prefix or libdir given to
# this make differs from the one it was made with (make install prefix=/usr
# after a plain make must not install a .pc that points at /usr/local)
$(B)/pagecache.pc: Makefile include/pagecache.h FORCE
	@mkdir -p $(B)
	@printf '%s\n' 'prefix=$(prefix)' 'exec_prefix=$(patsubst $(prefix)%,$${prefix}%,$(exec_prefix))' \
	  'libdir=$(patsubst $(exec_prefix)%,$${exec_prefix}%,$(libdir))' \
	  'includedir=$(patsubst $(prefix)%,$${prefix}%,$(includedir))' '' \
	  'Name: pagecache' \
	  'Description: see, warm, evict and lock the Linux page cache (libpagecache)' \
	  'Version: $(VERSION)' \
	  'Requires.private: $(LIB_PKGS)' \
	  'Libs: -L$${libdir} -lpagecache' \
	  'Libs.private: -lm -pthread' \
	  'Cflags: -I$${includedir}' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# LINK=shared: pagecache takes libpagecache.so.0 for what pagecache.h
# declares; run it from the build tree with LD_LIBRARY_PATH=build.
# pagecache-bench always takes libpagecache.a: its JSON reader and report
# writer go through the seam, whose faults t-report injects. Both take the
# JSON reader (and bench the statistics) from the internal archive.
ifeq ($(LINK),shared)
# record resolves its events with lib/record.c, keeps its spans with
# lib/spanset.c and opens them by (dev, ino) with lib/inode.c, record and
# top their files
# with lib/idmap.c, --pid and --cgroup find files with lib/target.c, lock
# keeps its set with lib/lockset.c, which the .so keeps hidden
# (lib/internal.h): their objects go into pagecache itself. So does a
# copy of the system call seam (lib/sys.h) for the calls of pagecache's
# own that go through it (--prom-file's writes, lock --watch's inotify,
# restore's and pull's reads), built without faults: the .so's seam is
# out of reach, so PAGECACHE_FAULT is refused.
CLI_HIDDEN_OBJ := $(B)/lib/spanset.o $(B)/lib/idmap.o $(B)/lib/target.o $(B)/lib/lockset.o \
	$(B)/lib/record.o $(B)/lib/inode.o \
	$(B)/lib/sys-nofault.o
RUN_PAGECACHE = LD_LIBRARY_PATH=$(B)$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} $(B)/pagecache
$(B)/pagecache: $(CLI_OBJ) $(CLI_HIDDEN_OBJ) $(INTERNAL_LIB) $(B)/libpagecache.so
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_HIDDEN_OBJ) $(INTERNAL_LIB) -L$(B) -lpagecache \
	  $(CLI_LIBS) -lm
else
RUN_PAGECACHE = $(B)/pagecache
$(B)/pagecache: $(CLI_OBJ) $(INTERNAL_LIB) $(B)/libpagecache.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(INTERNAL_LIB) $(B)/libpagecache.a $(LIBS) $(CLI_LIBS)
endif
$(B)/lib/sys-nofault.o: lib/sys.c lib/sys.h lib/internal.h include/pagecache.h | have-libs
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DPC_SYS_NOFAULT $(CFLAGS) -c -o $@ $<

$(B)/pagecache-bench: $(BENCH_OBJ) $(INTERNAL_LIB) $(B)/libpagecache.a
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(INTERNAL_LIB) $(B)/libpagecache.a $(BENCH_LIBS)

$(B)/tests/%: tests/unit/%.c tests/unit/tap.h tests/unit/snapcraft.h $(INTERNAL_LIB) $(B)/libpagecache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit -DPC_SRCDIR='"$(CURDIR)"' $(CFLAGS) $(LDFLAGS) -o $@ $< \
	  $(TEST_CLI_AR) $(INTERNAL_LIB) $(B)/libpagecache.a $(LIBS)

# The unit tests of src/'s own modules (the escapers, the option tables,
# the daemon's INI reader and wire format) link src/'s objects, from an
# archive of all but main.o, so each takes only what it calls, and the
# libraries pagecache itself links
SRC_UNIT := test-output test-opts test-daemon-conf
CLI_AR := $(B)/tests/libcli.a
$(CLI_AR): $(filter-out $(B)/src/main.o,$(CLI_OBJ))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^
$(SRC_UNIT:%=$(B)/tests/%): $(CLI_AR)
$(SRC_UNIT:%=$(B)/tests/%): TEST_CLI_AR = $(CLI_AR)
$(SRC_UNIT:%=$(B)/tests/%): LIBS += $(CLI_LIBS)

# test-scope's made-up systemd manager speaks sd-bus itself
$(B)/tests/test-scope: LIBS += $(SD_LIBS)

# a FUSE file system that holds a request until told (t-record's end phase)
$(B)/tests/stallfs: tests/unit/stallfs.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(call pkgq,--libs fuse3)

# the readers nocache cannot see (t-compat-nocache): as it is, and static.
# Fixtures, not code under test: built without SANITIZE's flags, which
# cannot link statically (and would make the dynamic one's reads ASan's).
READER_CFLAGS = $(filter-out $(SANFLAGS),$(CFLAGS))
$(B)/tests/reader: tests/unit/reader.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(READER_CFLAGS) -o $@ $<
$(B)/tests/reader-static: tests/unit/reader.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(READER_CFLAGS) -static -o $@ $<

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
NOCS_UNIT := $(addprefix $(B)/tests/,test-evict test-residency test-prefetch test-bdev test-overlay)
# and not the scripts that count no page: the licence, the option tables,
# the install, the ABI's lists, the units, the manifests, the registry
# transport (with them the two passes took 8.3 minutes of the 10 make check
# may take); top, whose counts are the tracepoints', never cachestat's;
# bench report, which reads JSON files and renders HTML only; the daemon
# under attack (its loop, links and owners: t-daemon counts the daemon's
# pages in both passes); and podman with the hook, whose pagecache runs
# with the environment its hooks JSON gives (none): the fault seam never
# reaches it, so a second pass would run the same thing again
NOCS_SKIP := t-licence t-options t-install t-abi t-units t-kubernetes t-oci t-top t-report \
	t-daemon-hostile t-podman
NOCS_CLI = $(filter-out $(NOCS_SKIP:%=tests/cli/%.sh),$(wildcard tests/cli/t-*.sh))
CHECK_ENV = PAGECACHE=$(CURDIR)/$(B)/pagecache MKSNAP=$(CURDIR)/$(B)/tests/mksnap STALLFS=$(CURDIR)/$(B)/tests/stallfs
# T='t-stat test-walk': only these tests, each named as its file is without
# the extension (tests/cli/t-*.sh, tests/unit/test-*.c; replay-json and
# replay-profile for the fuzz corpora), in the given order; the second pass
# runs those of them it would run anyway, and is left out if none is
t_path = $(or $(wildcard tests/cli/$(1).sh),$(if $(wildcard tests/unit/$(1).c),$(B)/tests/$(1)),$(filter $(B)/tests/$(1),$(REPLAY_BIN)),$(error T: no test '$(1)' (a name of tests/cli/t-*.sh or tests/unit/test-*.c without its extension; or replay-json or replay-profile)))
ifneq ($(strip $(T)),)
CHECK_FIRST := $(foreach t,$(T),$(call t_path,$(t)))
CHECK_SECOND := $(filter $(NOCS_UNIT) $(NOCS_CLI),$(CHECK_FIRST))
CHECK_BUILD := $(filter $(B)/tests/%,$(CHECK_FIRST))
else
CHECK_FIRST = $(UNIT_BIN) $(REPLAY_BIN) tests/cli/t-*.sh
CHECK_SECOND = $(NOCS_UNIT) $(NOCS_CLI)
CHECK_BUILD = $(UNIT_BIN) $(REPLAY_BIN)
endif
CHECK_PASS2 = echo "\# make check, second pass: as on a kernel without cachestat (PAGECACHE_FAULT=$(NOCS_FAULT))"; \
	$(CHECK_ENV) PAGECACHE_FAULT=$(NOCS_FAULT) PC_CHECK_PASS=nocachestat $(PROVE) $(if $(filter 1,$(V)),-v) \
	  $(CHECK_SECOND) || rc=1;
check: test-deps
	@$(MAKE) --no-print-directory check-only
check-only: all $(CHECK_BUILD) $(B)/tests/mksnap $(B)/tests/stallfs $(B)/tests/reader \
	$(B)/tests/reader-static
	rc=0; \
	$(CHECK_ENV) $(PROVE) $(if $(filter 1,$(V)),-v) \
	  $(CHECK_FIRST) || rc=1; \
	$(if $(strip $(CHECK_SECOND)),$(CHECK_PASS2),echo "# make check: no second pass (none of T runs in it)";) \
	exit $$rc

# ---- the Debian guest (tests/vm/) -------------------------------------------
# make check-vm: what depends on the kernel, cgroups and systemd, in a Debian
# 12 guest on its own kernel (Linux 6.1, cgroup v2, systemd 252 as PID 1):
# these unit and CLI tests as make check runs them, then the systemd units
# started for real (tests/vm/t-units-live.sh). Built here, run there (same
# Debian release): tests/vm/run.sh boots qemu, TCG emulation where /dev/kvm
# cannot run a stock kernel. The first run builds the image (mmdebstrap,
# cached in /var/tmp/pcvm): docs/testing.md has the figures. Not here, for
# time: t-overlay (it runs four other scripts again on an overlay: over 9
# minutes under TCG), t-bench (its cgroup runs: over 20), and the scripts
# that count no page (options, licence, manifests, reports). Nor t-top: the
# guest's kernel panicked 12 s into it once (RIP 0, "Fatal exception in
# interrupt", after t-swap), in one of about six guest runs of it; top's
# kprobe on folio_mark_accessed under multi-threaded TCG is suspected, not
# shown. test-trace still opens that kprobe here. Nor t-podman: the guest
# is made without podman, and rootful podman in it (runc under TCG, overlay
# storage on the guest's disk) was never tried.
VM_UNIT := test-beneath test-bdev test-caps test-cgroup test-evict test-faults test-kpage \
	test-kpage2 test-overlay test-prefetch test-proc test-residency test-scope test-trace test-vmstat
VM_CLI := t-caps t-cgroups t-compat-nocache t-containers t-daemon t-evict-lock t-lock-watch \
	t-hook t-record t-record-cold t-restore-inplace t-snapshot t-stat t-stat-memory t-stat-uring t-swap \
	t-units t-warm
VM_TESTS = $(VM_UNIT:%=$(B)/tests/%) $(VM_CLI:%=tests/cli/%.sh) tests/vm/t-units-live.sh \
	tests/vm/t-scope.sh
check-vm: deps
	$(call need,command -v qemu-system-x86_64,qemu-system-x86)
	$(call need,command -v mmdebstrap,mmdebstrap)
	@$(MAKE) --no-print-directory all $(VM_UNIT:%=$(B)/tests/%) $(B)/tests/mksnap $(B)/tests/stallfs \
	  $(B)/tests/reader $(B)/tests/reader-static
	tests/vm/run.sh -e BUILD=$(B) -- tests/vm/check.sh $(VM_TESTS)

demo: deps
	@$(MAKE) --no-print-directory $(PROGRAMS)
	@PAGECACHE=$(CURDIR)/$(B)/pagecache sh tests/demo.sh

bench: deps
	$(call need,command -v vmtouch,vmtouch)
	$(call need,command -v fio,fio)
	@$(MAKE) --no-print-directory $(PROGRAMS)
	PAGECACHE=$(CURDIR)/$(B)/pagecache bash bench/foundation.sh
	PAGECACHE=$(CURDIR)/$(B)/pagecache bash bench/nocache.sh

# The Debian packages from a clean clone of HEAD (what is committed), their
# contents and linkage, the personalities' alternatives installed beside the
# real vmtouch and fincore (as root, in an overlay of this host's root: no
# file of the host changes), and lintian without an error: tests/package/.
# 45 to 80 s (dpkg-buildpackage most of it, then dpkg and lintian); it drops no
# caches, so it needs no test lock; not part of check, since it wants the
# packaging tools (installed here when missing, as deps does).
package-check: deps
	$(call need,command -v dpkg-buildpackage,dpkg-dev)
	$(call need,command -v dh,debhelper)
	$(call need,command -v lintian,lintian)
	$(call need,command -v git,git)
	$(call need,command -v prove,perl)
	$(call need,command -v jq,jq)
	prove -v tests/package/t-package.sh

# make check (or CONTAINER_CMD) in a container: new namespaces, the tree and its
# scratch files on an overlay root over a Debian 12 root file system that
# mmdebstrap makes once from Debian's packages, with what deps and
# test-deps install (kept in /var/tmp/pcctr, keyed by that list): see
# tests/container/run.sh. As root; not part of check (.ci/run runs it).
# t-podman skips in there (run.sh sets PC_CHECK_CONTAINER=1): podman inside
# would keep its overlay storage on the container's overlay root and make
# its containers' cgroups in the host's hierarchy, bound in; not tried.
CONTAINER_CMD ?= make check
check-container:
	$(call need,command -v mmdebstrap,mmdebstrap)
	$(call need,command -v ip,iproute2)
	$(call need,command -v unshare,util-linux)
	tests/container/run.sh $(CONTAINER_CMD)

# libFuzzer harnesses: the snapshot decoder with restore's path handling,
# and the JSON reader (needs clang); FUZZ_SECONDS=60 each by default.
# `make check` replays their corpora (tests/fuzz/replay.c, gcc).
FUZZ_SECONDS ?= 60
fuzz: deps
	$(call need,command -v clang,clang)
	@mkdir -p build/fuzz
	set -e; for h in $(FUZZERS); do \
	  clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -Iinclude -Ilib $(PKG_CFLAGS) \
	    -o build/fuzz/fuzz-$$h tests/fuzz/fuzz-$$h.c $(LIB_SRC) $(INTERNAL_SRC) $(LIBS); \
	  rm -rf build/fuzz/corpus-$$h; cp -r tests/fuzz/corpus-$$h build/fuzz/corpus-$$h; \
	  build/fuzz/fuzz-$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    -rss_limit_mb=1024 build/fuzz/corpus-$$h; \
	done

$(B)/tests/replay-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(INTERNAL_LIB) $(B)/libpagecache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -DCORPUS='"$(CURDIR)/tests/fuzz/corpus-$*"' \
	  -o $@ $< tests/fuzz/replay.c $(INTERNAL_LIB) $(B)/libpagecache.a $(LIBS)

# The completions: `pagecache --completion bash|zsh` prints them from the
# tables its parser reads (src/options/opts.c), so they cannot drift from it.
$(B)/completion/pagecache: $(B)/pagecache
	@mkdir -p $(dir $@)
	$(RUN_PAGECACHE) --completion bash >$@.tmp && mv $@.tmp $@
$(B)/completion/_pagecache: $(B)/pagecache
	@mkdir -p $(dir $@)
	$(RUN_PAGECACHE) --completion zsh >$@.tmp && mv $@.tmp $@

install: all $(B)/pagecache.pc $(UNIT_FILES) $(HOOK_FILE)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libexecdir)/pagecache $(DESTDIR)$(libdir) \
	  $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(includedir) $(DESTDIR)$(man1dir) $(DESTDIR)$(man3dir) \
	  $(DESTDIR)$(man5dir) $(DESTDIR)$(man8dir)
	$(INSTALL) -m 755 $(B)/pagecache $(DESTDIR)$(bindir)/
	$(INSTALL) -m 755 $(B)/pagecache-bench $(DESTDIR)$(libexecdir)/pagecache/
	@# relative (bindir as seen from libexecdir), so the tree can move: a
	@# DESTDIR staging tree, a package's root
	for p in $(PERSONALITIES); do \
	  ln -sfn "$$(realpath -m --relative-to=$(libexecdir)/pagecache $(bindir))/pagecache" \
	    $(DESTDIR)$(libexecdir)/pagecache/$$p || exit 1; done
	$(INSTALL) -m 644 $(B)/libpagecache.so.$(VERSION) $(DESTDIR)$(libdir)/
	ln -sf libpagecache.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libpagecache.so
	$(INSTALL) -m 644 $(B)/libpagecache.a $(DESTDIR)$(libdir)/
	$(INSTALL) -m 644 $(B)/pagecache.pc $(DESTDIR)$(pkgconfigdir)/
	$(INSTALL) -m 644 include/pagecache.h $(DESTDIR)$(includedir)/
	$(INSTALL) -m 644 docs/man/*.1 $(DESTDIR)$(man1dir)/
	$(INSTALL) -m 644 docs/man/*.3 $(DESTDIR)$(man3dir)/
	$(INSTALL) -m 644 docs/man/*.5 $(DESTDIR)$(man5dir)/
	$(INSTALL) -m 644 docs/man/*.8 $(DESTDIR)$(man8dir)/
	$(INSTALL) -d $(DESTDIR)$(bashcompdir) $(DESTDIR)$(zshcompdir)
	$(INSTALL) -m 644 $(B)/completion/pagecache $(DESTDIR)$(bashcompdir)/pagecache
	$(INSTALL) -m 644 $(B)/completion/_pagecache $(DESTDIR)$(zshcompdir)/_pagecache
	$(INSTALL) -d $(DESTDIR)$(unitdir) $(DESTDIR)$(sysconfdir)/pagecache
	$(INSTALL) -m 644 $(UNIT_FILES) $(DESTDIR)$(unitdir)/
	@# the hook runs only for a container with io.pagecache.snapshot set
	$(INSTALL) -d $(DESTDIR)$(ocihookdir)
	$(INSTALL) -m 644 $(HOOK_FILE) $(DESTDIR)$(ocihookdir)/pagecache.json
	@# the config is the admin's once installed: never overwritten
	test -e $(DESTDIR)$(sysconfdir)/pagecache/pagecache.conf || \
	  $(INSTALL) -m 644 deploy/pagecache.conf $(DESTDIR)$(sysconfdir)/pagecache/pagecache.conf

uninstall:
	rm -f $(DESTDIR)$(bindir)/pagecache $(DESTDIR)$(libexecdir)/pagecache/pagecache-bench \
	  $(DESTDIR)$(libdir)/libpagecache.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME) \
	  $(DESTDIR)$(libdir)/libpagecache.so $(DESTDIR)$(libdir)/libpagecache.a \
	  $(DESTDIR)$(pkgconfigdir)/pagecache.pc $(DESTDIR)$(includedir)/pagecache.h \
	  $(addprefix $(DESTDIR)$(man1dir)/,$(notdir $(wildcard docs/man/*.1))) \
	  $(addprefix $(DESTDIR)$(man3dir)/,$(notdir $(wildcard docs/man/*.3))) \
	  $(addprefix $(DESTDIR)$(man5dir)/,$(notdir $(wildcard docs/man/*.5))) \
	  $(addprefix $(DESTDIR)$(man8dir)/,$(notdir $(wildcard docs/man/*.8))) \
	  $(DESTDIR)$(bashcompdir)/pagecache $(DESTDIR)$(zshcompdir)/_pagecache \
	  $(addprefix $(DESTDIR)$(unitdir)/,$(UNITS)) $(DESTDIR)$(ocihookdir)/pagecache.json
	rm -f $(addprefix $(DESTDIR)$(libexecdir)/pagecache/,$(PERSONALITIES))
	-rmdir $(DESTDIR)$(libexecdir)/pagecache
	@# the config only as installed: an edited one is the admin's
	if cmp -s deploy/pagecache.conf $(DESTDIR)$(sysconfdir)/pagecache/pagecache.conf; then \
	  rm -f $(DESTDIR)$(sysconfdir)/pagecache/pagecache.conf; \
	  rmdir $(DESTDIR)$(sysconfdir)/pagecache 2>/dev/null || true; fi

clean:
	rm -rf build
