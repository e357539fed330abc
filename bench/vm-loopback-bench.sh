#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Loopback latency and cost, in one VM boot (bench/lb-latency.c): a writer
# writes stamped YUYV frames at 30 fps for SECONDS (default 20), a read()
# reader at the same format prints the writer-to-reader latency (median,
# p90, max) and the system's busy CPU per new frame, at each size of SIZES
# (default "640x480 1280x720"), for
#   (a)  v4l2cuse: --source loopback:video43, plain write() into video43,
#        plain read() of /dev/video42 (every frame through CUSE both ways);
#   (a1) the same writer, the reader under v4l2cuse-run (its read() on the
#        fast path);
#   (a2) writer and reader under v4l2cuse-run (both on the fast path);
#   (b)  v4l2loopback (its DKMS module built on the host for the guest
#        kernel: apt-get install v4l2loopback-dkms linux-headers-<kver>),
#        one node, exclusive_caps=0; skipped with a note without it.
# For v4l2cuse also the CUSE requests of both nodes per new frame
# (`v4l2cuse-ctl stats`: cuse-requests and writer-cuse-requests).
#
# Run from the host:  tests/vm/vm-run.sh bench/vm-loopback-bench.sh [SECONDS [SIZES]]
# The lines land in <build>/vm-results/vm-loopback-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-20}
sizes=${2:-640x480 1280x720}
B=$V4L2CUSE_BUILD
lat=$B/bench/lb-latency
run=$B/preload/v4l2cuse-run
ctl=$B/daemon/v4l2cuse-ctl
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"

vm_modprobe cuse
vm_wait_node /dev/cuse 10
"$B/daemon/v4l2cuse" --device video42 --source "loopback:video43,sizes=${sizes// /+}" \
	--size "${sizes%% *}" \
	>"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
vm_on_exit kill $!
vm_wait_node /dev/video43 60 || bail_out "no writer node"

# The CUSE requests of every device of the daemon so far (a --device daemon
# serves the default control socket).
cuse_requests()
{
	"$ctl" stats 2>/dev/null | awk '$1 == "cuse-requests" || $1 == "writer-cuse-requests" { n += $2 }
		END { print n + 0 }'
}

# run NAME SIZE WRITER_DEV READER_DEV [WRITER_WRAP [READER_WRAP]]: one line.
run()
{
	local wpid line r0 r1 new
	${5:-} "$lat" write "$3" "$2" 30 $((secs + 10)) &
	wpid=$!
	sleep 3
	r0=$(cuse_requests)
	line="$1 size=$2 $(${6:-} "$lat" read "$4" "$2" "$secs")"
	r1=$(cuse_requests)
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	if [[ $1 != v4l2loopback ]]; then
		new=$(sed -n 's/.* new=\([0-9]*\) .*/\1/p' <<<"$line")
		line+=" cuse_req_per_new_frame=$(awk -v r=$((r1 - r0)) -v n="${new:-0}" 'BEGIN { printf "%.2f", n ? r / n : 0 }')"
	fi
	echo "$line host_load=$(vm_host_load)" | tee -a "$out"
}
for size in $sizes; do
	check "(a) v4l2cuse loopback, write() and read(), $size" \
		run v4l2cuse-plain "$size" /dev/video43 /dev/video42
	check "(a1) v4l2cuse loopback, write(), read() under v4l2cuse-run, $size" \
		run v4l2cuse-shim-reader "$size" /dev/video43 /dev/video42 "" "$run"
	check "(a2) v4l2cuse loopback, both under v4l2cuse-run, $size" \
		run v4l2cuse-shim-both "$size" /dev/video43 /dev/video42 "$run" "$run"
done

if vm_v4l2loopback 50; then
	for size in $sizes; do
		check "(b) v4l2loopback $size" run v4l2loopback "$size" /dev/video50 /dev/video50
	done
else
	diag "(b) skipped"
fi
