#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The library's ABI is written in four places that must agree: what the
# built libpagecache.so exports (nm -D), what include/pagecache.h declares,
# what the Debian symbols file lists (dpkg-gensymbols fails the package
# build on a symbol that vanished, and gives a new one no version), and
# what pagecache(3) documents. Each difference is named, with what to do
# about it: a function added to pagecache.h goes into the symbols file
# with the version it first ships in (PC_VERSION) and into pagecache(3).
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$(dirname "$PAGECACHE")" && pwd)
cd "$T_DIR"

if ! t_have nm readelf perl; then
	t_skip "the ABI's four lists" "$T_WHY"
	t_done; exit
fi
if [ ! -e "$B/libpagecache.so" ]; then
	t_skip "the ABI's four lists" "no $B/libpagecache.so (make builds it)"
	t_done; exit
fi
so=$(readlink -f "$B/libpagecache.so")
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
version=$(sed -n 's/^#define PC_VERSION "\(.*\)"/\1/p' "$REPO/include/pagecache.h")
# libpagecache.so.N is packaged as libpagecacheN (Debian's rule for a
# name ending in a digit would be libpagecache-N; ours does not)
pkg=lib$(sed 's/^lib\(.*\)\.so\.\([0-9]*\)$/\1\2/' <<<"$soname")
symfile=$REPO/debian/$pkg.symbols
t_is "the library has a SONAME" "${soname:+set}" set
t_ok "its package's symbols file is debian/$pkg.symbols" test -f "$symfile"
t_is "  and it has no other (debian/*.symbols)" \
	"$(cd "$REPO/debian" && ls -- *.symbols 2>/dev/null | grep -vx "$pkg.symbols" | xargs)" ""
t_is "whose first line names that SONAME and package" \
	"$(head -1 "$symfile" 2>/dev/null)" "$soname $pkg #MINVER#"
t_ok "debian/control builds that package" grep -qx "Package: $pkg" "$REPO/debian/control"
t_ok "and debian/$pkg.install installs it" test -f "$REPO/debian/$pkg.install"

nm -D --defined-only "$so" | awk '{ print $3 }' | sort -u >exported
# pagecache.h's functions: its declarations with the comments taken out
# (a comment may name a function: "pc_cgroup_nest_init makes the room")
perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' "$REPO/include/pagecache.h" >header
grep -oE '\bpc_[a-z0-9_]+[[:space:]]*\(' header | tr -d '( \t' | sort -u >declared
# its types, which pagecache(3) names too
{
	grep -oE '\b(struct|enum|union)[[:space:]]+pc_[a-z0-9_]+' header | awk '{ print $2 }'
	perl -0777 -ne 'print "$1\n" while /typedef[^;]*?\b(pc_[a-z0-9_]+)\b[^;]*;/gs' header
} | sort -u >types
sed -n 's/^ \([^@ ]*\)@Base .*/\1/p' "$symfile" | sort >listed
grep -oE '\bpc_[a-z0-9_]+' "$REPO/docs/man/pagecache.3" | sort -u | comm -23 - types >documented

t_ok "the library exports functions ($(wc -l <exported))" test -s exported
# hint FILE...: each line as a comment, for prove's log
hint() { sed 's/^/#   /' "$@" >&2; }

comm -13 declared exported >x
t_is "every export is declared in pagecache.h" "$(xargs <x)" ""
[ -s x ] && { echo "# declare these in include/pagecache.h, or make them hidden (lib/internal.h):" >&2; hint x; }
comm -23 declared exported >x
t_is "every function pagecache.h declares is exported" "$(xargs <x)" ""
[ -s x ] && { echo "# declared in include/pagecache.h but not defined in lib/ (or not built):" >&2; hint x; }

comm -13 listed exported | sed "s/.*/ &@Base $version/" >x
t_is "every export is in debian/$pkg.symbols" "$(xargs <x)" ""
[ -s x ] && { echo "# add these lines to debian/$pkg.symbols (in order; the version: the release a symbol first ships in):" >&2; hint x; }
comm -23 listed exported >x
t_is "every symbol debian/$pkg.symbols lists is exported" "$(xargs <x)" ""
[ -s x ] && { echo "# gone from the library: a removal breaks the ABI (see NEWS.md on the soname); drop them from debian/$pkg.symbols:" >&2; hint x; }
t_is "  each listed once" "$(uniq -d listed | xargs)" ""

comm -13 documented exported >x
t_is "every export is documented in pagecache(3)" "$(xargs <x)" ""
[ -s x ] && { echo "# say what these do in docs/man/pagecache.3 (.BR name ()):" >&2; hint x; }
comm -23 documented exported >x
t_is "pagecache(3) documents no function the library does not export" "$(xargs <x)" ""
[ -s x ] && { echo "# named in docs/man/pagecache.3 but not exported (nor a type of pagecache.h):" >&2; hint x; }
t_done
