#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What each extra consumer of a shared device costs the daemon, in one VM
# boot: a shared pattern device at 640x480 YUYV, 30 fps; for N = 1, 2, 4
# read() consumers (tests/vm/share-client.c, all frames checked whole),
# the daemon's own CPU time (utime + stime from /proc/PID/stat) over
# SECONDS (default 10) after a 2 s warm-up, per frame produced (30 a
# second), and the system-wide busy CPU per frame (/proc/stat), so the
# consumers' share is visible.
#
# Run from the host:  tests/vm/vm-run.sh bench/vm-share-bench.sh [SECONDS]
# The lines land in <build>/vm-results/vm-share-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-10}
B=$V4L2CUSE_BUILD
client=$B/tests/vm/share-client
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"
tck=$(getconf CLK_TCK)

vm_modprobe cuse
vm_wait_node /dev/cuse 10
"$B/daemon/v4l2cuse" --device video42 --share --size 640x480 >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
daemon_pid=$!
vm_on_exit kill $daemon_pid
vm_wait_node /dev/video42 20 || bail_out "no /dev/video42"

daemon_ticks()
{
	awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat"
}

busy_ticks()
{
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

for n in 1 2 4; do
	pids=()
	for ((i = 0; i < n; i++)); do
		"$client" /dev/video42 read 0 0 none >"$V4L2CUSE_RESULTS/client-$n-$i.out" 2>&1 &
		pids+=($!)
	done
	sleep 2
	d0=$(daemon_ticks) b0=$(busy_ticks) t0=$(date +%s.%N)
	sleep "$secs"
	d1=$(daemon_ticks) b1=$(busy_ticks) t1=$(date +%s.%N)
	kill -TERM "${pids[@]}"
	wait "${pids[@]}" || true
	frames=$(cat "$V4L2CUSE_RESULTS"/client-$n-*.out | grep -oE 'frames=[0-9]+' | cut -d= -f2 |
		awk '{ s += $1 } END { print s }')
	awk -v n="$n" -v d="$((d1 - d0))" -v b="$((b1 - b0))" -v tck="$tck" -v t0="$t0" -v t1="$t1" \
		-v f="$frames" 'BEGIN {
			produced = 30 * (t1 - t0)
			printf "consumers=%d daemon_ms_per_frame=%.2f busy_ms_per_frame=%.2f " \
			       "frames_read=%d\n", n, d * 1000 / tck / produced, b * 1000 / tck / produced, f
		}' | tee -a "$out"
done
ok "shared-device bench done ($out)"
