#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The streaming benchmark, in one VM boot: steady-state capture of 640x480
# and 1280x720 YUYV at 30 fps (after a 1 s warm-up, process start-up
# excluded) from
#   (a) v4l2cuse through the preload shim (MMAP, bench/v4l2-mmap-bench),
#   (b) v4l2cuse through read() (bench/v4l2-bench read, one read() a frame),
#   (c) vivid, MMAP and read(),
#   (d) v4l2loopback fed by ffmpeg (MMAP), if its DKMS module was built for
#       the guest kernel (apt-get install v4l2loopback-dkms
#       linux-headers-<kver> on the host); skipped with a note otherwise.
# Each line reports delivered fps and system-wide busy CPU per frame from
# /proc/stat, so the daemon's (or ffmpeg's) work is counted.
#
# Run from the host:  tests/vm/vm-run.sh bench/vm-mmap-bench.sh [SECONDS]
# The lines land in <build>/vm-results/vm-mmap-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-10}
B=$V4L2CUSE_BUILD
run=$B/preload/v4l2cuse-run
out=$V4L2CUSE_RESULTS/results.txt
: >"$out"

vm_modprobe cuse
vm_modprobe vivid n_devs=1 node_types=0x1
vm_wait_node /dev/cuse 10
vivid=$(vm_find_video 'vivid-000-vid-cap') || bail_out "no vivid capture node"

"$B/daemon/v4l2cuse" --device video42 >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
daemon_pid=$!
vm_on_exit kill $daemon_pid
vm_wait_node /dev/video42 20 || bail_out "no /dev/video42"

# v4l2loopback: the module DKMS built on the host for this kernel, if any.
loop=
ko=$(find "/lib/modules/$V4L2CUSE_KVER/updates" -name 'v4l2loopback.ko*' 2>/dev/null | head -1 || true)
if [[ -n $ko ]]; then
	vm_modprobe videodev || true
	if insmod "$ko" devices=1 video_nr=50 exclusive_caps=0 card_label=loopback 2>"$V4L2CUSE_RESULTS/insmod.log"; then
		loop=/dev/video50
		vm_wait_node $loop 10 || loop=
	fi
fi
[[ -n $loop ]] || diag "v4l2loopback: no module for $V4L2CUSE_KVER (install v4l2loopback-dkms and linux-headers-$V4L2CUSE_KVER on the host); (d) skipped"

idle()
{
	local b0 t0 b1 t1
	read -r b0 t0 <<<"$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"
	sleep "$secs"
	read -r b1 t1 <<<"$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"
	echo "idle busy_ms_per_s=$(((b1 - b0) * 1000 / $(getconf CLK_TCK) / secs))" | tee -a "$out"
}
check "idle baseline" idle
for d in /dev/video42 "$vivid"; do
	check "rtt $d" bash -c "'$B/bench/v4l2-bench' rtt $d 300 | tee -a '$out'"
done

# Where v4l2cuse's time goes: the daemon's own CPU (utime+stime of its
# process) per frame, next to the system-wide figure the tool reports.
# attributed TAG CMD...: run CMD (it prints frames=N), add "daemon_ms_per_frame".
attributed()
{
	local tag=$1 t0 t1 line frames
	shift
	t0=$(awk '{print $14 + $15}' /proc/$daemon_pid/stat)
	line=$("$@")
	t1=$(awk '{print $14 + $15}' /proc/$daemon_pid/stat)
	frames=$(sed -n 's/.* frames=\([0-9]*\) .*/\1/p' <<<"$line")
	echo "$line daemon_ms_per_frame=$(awk -v d=$((t1 - t0)) -v f="$frames" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f", f ? d * 1000 / hz / f : 0 }')" | tee -a "$out"
}

for size in 640x480 1280x720; do
	check "(a) v4l2cuse shim mmap $size" attributed a \
		"$run" "$B/bench/v4l2-mmap-bench" /dev/video42 $size 30 "$secs"
	check "(b) v4l2cuse read $size" attributed b \
		"$B/bench/v4l2-bench" read /dev/video42 $size 30 "$secs"
	check "(c) vivid mmap $size" bash -o pipefail -c \
		"'$B/bench/v4l2-mmap-bench' $vivid $size 30 $secs | tee -a '$out'"
	check "(c) vivid read $size" bash -o pipefail -c \
		"'$B/bench/v4l2-bench' read $vivid $size 30 $secs | tee -a '$out'"
	if [[ -n $loop ]]; then
		# The cheapest producer: zeros at 30 fps, no conversion.
		ffmpeg -hide_banner -loglevel error -re -f rawvideo -pix_fmt yuyv422 -s "$size" \
			-r 30 -i /dev/zero -f v4l2 $loop >"$V4L2CUSE_RESULTS/ffmpeg-loop.log" 2>&1 &
		feeder=$!
		# The capture side has a format once the writer streams (ffmpeg starts slowly).
		for _ in $(seq 60); do
			v4l2-ctl -d $loop --get-fmt-video 2>/dev/null | grep -q "Width/Height *: ${size/x//}" && break
			sleep 0.5
		done
		check "(d) v4l2loopback mmap $size (ffmpeg feeding)" bash -o pipefail -c \
			"'$B/bench/v4l2-mmap-bench' $loop $size 30 $secs | tee -a '$out'"
		kill "$feeder" 2>/dev/null || true
		wait "$feeder" 2>/dev/null || true
	fi
done
diag "results:"
sed 's/^/#   /' "$out"
