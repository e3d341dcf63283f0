#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtouch's sizes (-m, -p) that are not numbers: "nan" with a multiplier
# was taken (strtod reads it) and cast to an integer, which C leaves
# undefined: a -m limit of whatever the machine makes of it. Refused as
# every other bad size is.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

mkfile f 8
for a in "-m nank" "-m -nanm" "-p nank" "-p 1-nanG"; do
	# shellcheck disable=SC2086
	"$PAGECACHE" vmtouch $a f >out 2>err
	t_is "$a: exit status" "$?" 1
	t_is "$a: refused as a bad size" "$(cat out err)" \
		"vmtouch: FATAL: bad size. examples: 4096, 4k, 100M, 1.5G"
done
"$PAGECACHE" vmtouch -m 1.5k -p 4k f >out 2>err
t_is "-m 1.5k -p 4k: sizes still taken" "$(cat err)" "vmtouch: WARNING: file f too large, skipping"
t_done
