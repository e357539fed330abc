#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where a loopback frame's CPU goes, in one VM boot (docs/performance.md,
# "Loopback: where a frame's CPU goes"):
#   1. bench/primitive-costs at each size: a syscall, a user-space memcpy of
#      a frame, the kernel's copies of one, a wake-up round trip;
#   2. per process, the run time (the scheduler's, /proc/PID/task/*/schedstat)
#      and the voluntary context switches per frame written, over SECONDS
#      (default 15) of bench/lb-latency writing YUYV at 30 fps, for
#        (a2) v4l2cuse, writer and read() reader both under v4l2cuse-run
#             (the daemon, the writer, the reader);
#        (b)  v4l2loopback 0.12.7 (as bench/vm-loopback-bench.sh; the
#             writer, the reader; skipped with a note without it).
#
# Run from the host:
#   V4L2CUSE_VM_APPEND="clocksource=tsc tsc=reliable" \
#     tests/vm/vm-run.sh bench/vm-loopback-breakdown.sh [SECONDS [SIZES]]
# The lines land in <build>/vm-results/vm-loopback-breakdown/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-15}
sizes=${2:-640x480 1280x720}
B=$V4L2CUSE_BUILD
lat=$B/bench/lb-latency
run=$B/preload/v4l2cuse-run
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"

for size in $sizes; do
	w=${size%x*} h=${size#*x}
	line=$(timeout 120 "$B/bench/primitive-costs" $((w * h * 2)) | tr '\n' ' ') ||
		bail_out "primitive-costs failed at $size"
	echo "primitives size=$size $line" | tee -a "$out"
done

# Run time (ns) and voluntary context switches of every thread of PID: one
# process to read them (each one started costs 0.1-0.3 s under TCG).
proc_cost()
{
	awk 'FILENAME ~ /schedstat$/ { ns += $1; next }
		/^voluntary_ctxt_switches/ { sw += $2 }
		END { printf "%.0f %d\n", ns, sw }' /proc/"$1"/task/*/schedstat /proc/"$1"/task/*/status
}

# measure NAME SIZE WRITER_DEV READER_DEV WRAP [DAEMON_PID]: one line.
measure()
{
	local name=$1 size=$2 wdev=$3 rdev=$4 wrap=$5 dpid=${6:-} wpid rpid p ns0 sw0 ns1 sw1
	local -A c0 c1
	$wrap "$lat" write "$wdev" "$size" 30 $((secs + 40)) >/dev/null &
	wpid=$!
	sleep 2
	$wrap "$lat" read "$rdev" "$size" $((secs + 25)) >"$V4L2CUSE_RESULTS/reader-$name-$size.txt" &
	rpid=$!
	sleep 3
	for p in $dpid $wpid $rpid; do c0[$p]=$(proc_cost "$p"); done
	sleep "$secs"
	# Well before the reader's end: a process that has exited has no threads to read.
	for p in $dpid $wpid $rpid; do c1[$p]=$(proc_cost "$p"); done
	wait "$rpid" || true
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" 2>/dev/null || true
	local line="$name size=$size" total=0 role frames=$((secs * 30))
	for p in $dpid $wpid $rpid; do
		case $p in $dpid) role=daemon ;; $wpid) role=writer ;; *) role=reader ;; esac
		read -r ns0 sw0 <<<"${c0[$p]}"
		read -r ns1 sw1 <<<"${c1[$p]}"
		line+=$(awk -v r="$role" -v ns=$((ns1 - ns0)) -v sw=$((sw1 - sw0)) -v f=$frames \
			'BEGIN { printf " %s_ms=%.2f %s_switches=%.2f", r, ns / 1e6 / f, r, sw / f }')
		total=$((total + ns1 - ns0))
	done
	line+=$(awk -v ns=$total -v f=$frames 'BEGIN { printf " total_ms=%.2f", ns / 1e6 / f }')
	line+=" reader: $(cat "$V4L2CUSE_RESULTS/reader-$name-$size.txt") host_load=$(vm_host_load)"
	echo "$line" | tee -a "$out"
}

vm_modprobe cuse
vm_wait_node /dev/cuse 10
"$B/daemon/v4l2cuse" --device video42 --source "loopback:video43,sizes=${sizes// /+}" \
	--size "${sizes%% *}" >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
dpid=$!
vm_on_exit kill $dpid
vm_wait_node /dev/video43 60 || bail_out "no writer node"
for size in $sizes; do
	check "(a2) v4l2cuse, both under v4l2cuse-run, $size" \
		measure v4l2cuse-shim-both "$size" /dev/video43 /dev/video42 "$run" "$dpid"
done
kill "$dpid"
wait "$dpid" 2>/dev/null || true

if vm_v4l2loopback 50; then
	for size in $sizes; do
		check "(b) v4l2loopback $size" measure v4l2loopback "$size" /dev/video50 /dev/video50 ""
	done
else
	diag "(b) skipped"
fi
