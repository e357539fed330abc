#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The device-core benchmark, in one VM boot: ioctl round trips (QUERYCAP,
# G_FMT) and steady-state read() capture at 640x480 and 1280x720 YUYV 30 fps,
# on v4l2cuse and on vivid (a kernel driver in the same kernel: the anchor).
#
# Run from the host:  tests/vm/vm-run.sh bench/vm-read-bench.sh [SECONDS]
# The table lands in build/vm-results/vm-read-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-10}
bench=$V4L2CUSE_BUILD/bench/v4l2-bench
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"

vm_modprobe cuse
vm_modprobe vivid n_devs=1 node_types=0x1
vm_wait_node /dev/cuse 10
vivid=$(vm_find_video 'vivid-000-vid-cap') || bail_out "no vivid capture node"

"$V4L2CUSE_BUILD/daemon/v4l2cuse" --device video42 >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
vm_on_exit kill $!
vm_wait_node /dev/video42 20 || bail_out "no /dev/video42"

for dev in /dev/video42 "$vivid"; do
	check "rtt $dev" bash -c "'$bench' rtt $dev 500 | tee -a '$out'"
done
for size in 640x480 1280x720; do
	for dev in /dev/video42 "$vivid"; do
		check "read $dev $size" bash -c "'$bench' read $dev $size 30 $secs | tee -a '$out'"
	done
done
diag "results:"
sed 's/^/#   /' "$out"
