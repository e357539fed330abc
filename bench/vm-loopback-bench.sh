#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Loopback latency and cost, in one VM boot (bench/lb-latency.c): a writer
# writes stamped 640x480 YUYV frames at 30 fps for SECONDS (default 20), a
# read() reader at the same format prints the writer-to-reader latency
# (median, p90, max) and the system's busy CPU per frame, for
#   (a) v4l2cuse: --source loopback:video43, reading /dev/video42 at 30 fps;
#   (b) v4l2loopback (its DKMS module built on the host for the guest
#       kernel: apt-get install v4l2loopback-dkms linux-headers-<kver>),
#       one node, exclusive_caps=0; skipped with a note without it.
#
# Run from the host:  tests/vm/vm-run.sh bench/vm-loopback-bench.sh [SECONDS]
# The lines land in <build>/vm-results/vm-loopback-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-20}
B=$V4L2CUSE_BUILD
lat=$B/bench/lb-latency
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"

vm_modprobe cuse
vm_wait_node /dev/cuse 10
"$B/daemon/v4l2cuse" --device video42 --source loopback:video43 --size 640x480 \
	>"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
vm_on_exit kill $!
vm_wait_node /dev/video43 60 || bail_out "no writer node"

# run NAME WRITER_DEV READER_DEV
run()
{
	local wpid
	"$lat" write "$2" 640x480 30 $((secs + 10)) &
	wpid=$!
	sleep 3
	echo "$1 $("$lat" read "$3" 640x480 "$secs")" | tee -a "$out"
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
}
check "v4l2cuse loopback" run v4l2cuse /dev/video43 /dev/video42

ko=$(find "/lib/modules/$V4L2CUSE_KVER/updates" -name 'v4l2loopback.ko*' 2>/dev/null | head -1 || true)
if [[ -n $ko ]]; then
	vm_modprobe videodev || true
	if insmod "$ko" devices=1 video_nr=50 exclusive_caps=0 2>"$V4L2CUSE_RESULTS/insmod.log" &&
		vm_wait_node /dev/video50 10; then
		check "v4l2loopback" run v4l2loopback /dev/video50 /dev/video50
	else
		diag "v4l2loopback did not load: $(cat "$V4L2CUSE_RESULTS/insmod.log")"
	fi
else
	diag "no v4l2loopback module for $V4L2CUSE_KVER: (b) skipped"
fi
