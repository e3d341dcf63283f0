#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# JSON for any name: Linux allows every byte but '/' and NUL in a name,
# JSON only UTF-8. Files named with stray and truncated bytes, overlong
# forms, a UTF-8-encoded surrogate, a code point past U+10FFFF, control
# characters, quotes and backslashes, and names that look like another
# name's escape: the output must be strict UTF-8 that jq parses, no two
# names may print the same "path", and each name must come back byte for
# byte (path_bytes, base64, where path is escaped; path itself elsewhere),
# and path must read back by the documented rule (\\ a backslash, \xHH
# for HH 80..ff a byte, any other backslash itself). systemd's escapes
# (\x2d) stay as they are. --json=short is checked line by line.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if ! t_have jq base64 iconv perl; then
	t_skip "JSON names" "$T_WHY"
	t_done; exit
fi
mkdir d
NAMES=($'\xff' $'\xc3\x28' $'\xc0\xaf' $'\xe0\x80\xaf' $'\xed\xa0\x80' $'\xf4\x90\x80\x80'
	$'\xe2\x80' 'ÿ' '\xff' '\\xff' $'\\\xff' 'back\slash'
	'pc\x2dfoo.service' 'end\' $'\\\\\xc3' $'q"uote' $'new\nline' $'tab\t'
	$'\x1b[31mred' $'\x7f' $'\xc2\x9b' $'\xef\xbf\xbd' 'plain' '\u00ff' '\xE9')
for n in "${NAMES[@]}"; do : >"d/$n"; done
t_is "every hostile name made" "$(find d -type f -printf . | wc -c)" "${#NAMES[@]}"

# each name's bytes as base64, one a line: what the output must give back
for n in "${NAMES[@]}"; do printf '%s' "d/$n" | base64 -w0; echo; done | sort >want

pc stat -v --json d >pretty.json
t_ok "pretty: strict UTF-8" iconv -f UTF-8 -t UTF-8 pretty.json
t_ok "pretty: jq parses it" jq -e . pretty.json
t_is "pretty: one record per name" "$(jq '.files | length' pretty.json)" "${#NAMES[@]}"
t_is "pretty: no two names print the same path" \
	"$(jq '[.files[].path] | unique | length' pretty.json)" "${#NAMES[@]}"
# path_bytes where the text was escaped, else path's own UTF-8 bytes
jq -r '.files[] | .path_bytes // (.path | @base64)' pretty.json | sort >got
t_is "pretty: every name comes back byte for byte" "$(diff want got && echo same)" same
# jq decodes base64 to a string, a bad byte to U+FFFD: path_bytes is
# needless where it decodes to path itself
t_is "path_bytes exactly where path is not the name" \
	"$(jq -r '.files[] | select(has("path_bytes")) |
		select((.path_bytes | @base64d) as $b | ($b | @base64) == .path_bytes and $b == .path) |
		.path' pretty.json)" ""
unescape() { perl -pe 's/\\(?:(\\)|x([89a-f][0-9a-f]))/defined $1 ? "\\" : chr(hex $2)/ge'; }
jq -r '.files[].path | @base64' pretty.json | while read -r b; do
	base64 -d <<<"$b" | unescape | base64 -w0; echo; done | sort >read
t_is "path read back by the documented rule is the name" "$(diff want read && echo same)" same
t_is "UTF-8 names are their own path, systemd's escapes, \\xE9 (uppercase) and lone backslashes too" \
	"$(jq -r '.files[] | select(.path | IN("d/ÿ", "d/plain", "d/q\"uote", "d/back\\slash",
		"d/pc\\x2dfoo.service", "d/end\\", "d/\\xE9")) | has("path_bytes")' pretty.json |
		sort | uniq -c | tr -s ' ')" " 7 false"
t_is "a stray byte is the text \\xff" \
	"$(jq -r '.files[] | select(.path_bytes == "ZC//") | .path' pretty.json)" 'd/\xff'
t_is "a name that looks like an escape has its backslash doubled" \
	"$(jq -r '.files[] | select(.path_bytes == "ZC9ceGZm") | .path' pretty.json)" 'd/\\xff'
t_is "control characters come back as themselves (RFC 8259 escapes)" \
	"$(jq -r '.files[] | select(.path | startswith("d/new")) | .path' pretty.json | od -An -c | tr -s ' ')" \
	" d / n e w \n l i n e \n"
t_is "C1 and DEL are \\u escapes, not raw bytes" \
	"$(grep -c $'\xc2\x9b\|\x7f\|\x1b' pretty.json)" 0

pc stat -v --json=short d >short.json
t_ok "short: strict UTF-8" iconv -f UTF-8 -t UTF-8 short.json
t_is "short: every line is one JSON object of one member" \
	"$(jq -R 'fromjson | select(type == "object" and length == 1) | keys[0]' short.json |
		sort | uniq -c | tr -s ' ')" " ${#NAMES[@]} \"files\"
 1 \"total\""
t_is "short: the last line is the total" "$(tail -n1 short.json | jq -r 'keys[0]')" total
jq -r 'select(.files) | .files | .path_bytes // (.path | @base64)' short.json | sort >got
t_is "short: every name comes back byte for byte" "$(diff want got && echo same)" same
t_is "short and pretty say the same records" \
	"$(jq -c 'select(.files) | .files | del(.elapsed)' short.json | sort)" \
	"$(jq -c '.files[] | del(.elapsed)' pretty.json | sort)"

# the errors list and usage errors go through the same writer
pc stat --json $'d/\xfe-missing' >err.json 2>/dev/null
t_ok "errors: strict UTF-8" iconv -f UTF-8 -t UTF-8 err.json
t_is "errors: the missing name comes back" \
	"$(jq -r '.errors[0].path_bytes' err.json | base64 -d | od -An -tx1 | tr -s ' ')" \
	"$(printf 'd/\xfe-missing' | od -An -tx1 | tr -s ' ')"
pc stat --json=short $'--no-such-\xff' >usage.json 2>/dev/null
t_ok "usage error: strict UTF-8" iconv -f UTF-8 -t UTF-8 usage.json
t_is "usage error: one short line, its bytes beside it" \
	"$(jq -r '.usage | has("error_bytes")' usage.json)" true
t_done
