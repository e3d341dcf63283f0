#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t-compat-nocache.sh: `pagecache run --no-cache -- CMD` beside nocache 1.1
# (Debian's nocache, an LD_PRELOAD that fadvises DONTNEED as files are
# closed), on the same file, counting with fincore what each left cached.
# As root: both leave nothing of a `cat`; for a reader that maps the file
# and one linked static (tests/unit/reader.c), nocache leaves the pages and
# pagecache none. As nobody: nocache runs, and drops the user's own file
# but none of a file the user may not write (it trusts mincore, which
# answers "all cached" there); run --no-cache either runs CMD
# contained (a cgroup delegated to the user) and leaves nothing, or exits 1
# without running CMD, saying what is missing (docs/compat.md, "nocache").
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

READER=${READER:-$(dirname "$PAGECACHE")/tests/reader}
if ! t_root; then
	t_skip "nocache compared" "needs root (drops caches, runs as nobody)"
	t_done; exit
fi
if [ ! -d /sys/fs/cgroup/memory ] && ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	t_skip "nocache compared" "no memory cgroup controller: run --no-cache cannot run here"
	t_done; exit
fi
have_nocache=1
command -v nocache >/dev/null || have_nocache=0
[ -x "$READER" ] && [ -x "$READER-static" ] || { echo "# no $READER(-static): make $READER $READER-static" >&2; exit 1; }

chmod 755 "$T_DIR"
head -c 8388608 /dev/urandom >file
chmod 644 file
sync file
want=$(wc -c <file)
pages=2048

# each reader; what `CMD file` prints is compared, not just its status
readers=("cat:cat" "read:$READER read" "mmap:$READER mmap" "static read:$READER-static read"
	"static mmap:$READER-static mmap")
# nocache covers what it sees: a dynamic reader's read(2) and close(2)
nocache_drops() { case $1 in cat|read) return 0 ;; esac; return 1; }

for r in "${readers[@]}"; do
	what=${r%%:*} cmd=${r#*:}
	ref=$($cmd file | { [ "$what" = cat ] && wc -c || cat; })
	if [ "$have_nocache" = 1 ]; then
		drop file
		got=$(nocache $cmd file | { [ "$what" = cat ] && wc -c || cat; })
		t_is "nocache, $what: read it all" "$got" "$ref"
		c=$(cached_pages file)
		if nocache_drops "$what"; then
			t_is "nocache, $what: leaves none cached" "$c" 0
		else
			# (a proactive reclaimer may take some; nocache takes none)
			t_ok "nocache, $what: leaves pages cached ($c of $pages): LD_PRELOAD does not see it" \
				test "$c" -gt 0
		fi
	else
		t_skip "nocache, $what" "nocache is not installed (apt-get install nocache)"
	fi
	drop file
	got=$("$PAGECACHE" run --no-cache -- $cmd file | { [ "$what" = cat ] && wc -c || cat; })
	t_is "run --no-cache, $what: read it all" "$got" "$ref"
	t_is "run --no-cache, $what: leaves none cached" "$(cached_pages file)" 0
done
t_is "the file is what it was" "$(wc -c <file)" "$want"

# pages that were cached before CMD stay cached under both
"$PAGECACHE" warm file >/dev/null 2>&1 || cat file >/dev/null
before=$(cached_pages file)
"$PAGECACHE" run --no-cache -- cat file >/dev/null
t_ok "run --no-cache: what was cached before stays ($before before, $(cached_pages file) after)" \
	test "$(cached_pages file)" -ge $((before * 9 / 10))
if [ "$have_nocache" = 1 ]; then
	cat file >/dev/null
	before=$(cached_pages file)
	nocache cat file >/dev/null
	t_ok "nocache: so too ($before before, $(cached_pages file) after)" \
		test "$(cached_pages file)" -ge $((before * 9 / 10))
fi

# exit status: CMD's, for both
"$PAGECACHE" run --no-cache -- sh -c 'exit 7'; rc=$?
t_is "run --no-cache exits with CMD's status" "$rc" 7
if [ "$have_nocache" = 1 ]; then
	nocache sh -c 'exit 7'; rc=$?
	t_is "as nocache does" "$rc" 7
fi

# as a user (nobody: no capability, no cgroup of its own)
mkdir nb
chown 65534:65534 nb
if [ "$have_nocache" = 1 ]; then
	cp file nb/own
	chown 65534:65534 nb/own
	drop nb/own
	got=$(as_nobody nocache cat "$T_DIR/nb/own" | wc -c)
	t_is "as nobody, nocache runs (any user may LD_PRELOAD)" "$got" "$want"
	t_is "and leaves none of the user's own file cached" "$(cached_pages nb/own)" 0
	# nocache keeps the pages mincore(2) says were cached before; for a
	# file the caller may not write, mincore says all were (a fake answer,
	# docs/kernel-facts.md section 1), so nocache drops none of root's file
	drop file
	got=$(as_nobody nocache cat "$T_DIR/file" | wc -c)
	t_is "as nobody, nocache reads root's 0644 file" "$got" "$want"
	c=$(cached_pages file)
	t_ok "and leaves it cached ($c of $pages): mincore's fake answer fools it" test "$c" -gt 0
fi
drop file
nobody_pc run --no-cache -- sh -c 'touch "$1"; cat "$2"' _ "$T_DIR/nb/ran" "$T_DIR/file" >o 2>e; rc=$?
if [ "$rc" = 0 ]; then
	# a cgroup delegated to the user: then CMD ran, inside it
	t_ok "as nobody, run --no-cache ran CMD (a cgroup of the user's own)" test -e nb/ran
	t_is "and left none cached" "$(cached_pages file)" 0
else
	t_is "as nobody, run --no-cache with no cgroup of its own exits 1" "$rc" 1
	t_ok "without running CMD" test ! -e nb/ran
	t_is "so nothing was read" "$(cached_pages file)" 0
	t_is "and printed nothing on stdout" "$(wc -c <o)" 0
	sed 's/^/# stderr: /' e
	t_ok "saying CMD did not run" grep -q "did not run" e
	t_ok "saying what would work (root, or a cgroup delegated to the user)" \
		grep -q "as root" e
fi
t_done
