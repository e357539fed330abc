#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The streaming benchmark, in one VM boot: steady-state capture of 640x480
# and 1280x720 YUYV at 30 fps (after a 1 s warm-up, process start-up
# excluded) from
#   (a)  v4l2cuse through the preload shim, MMAP, the fast path
#        (bench/v4l2-mmap-bench under v4l2cuse-run),
#   (a0) the same with V4L2CUSE_FASTPATH=0 (every QBUF, DQBUF, poll through CUSE),
#   (b)  v4l2cuse through read() (bench/v4l2-bench read, one read() a frame),
#   (b1) the same under v4l2cuse-run: read() emulated by the shim over the
#        fast path (no CUSE request a frame),
#   (c)  vivid, MMAP and read(),
#   (u)  the same device through its USB face (usb=true, docs/usb.md): the
#        uvcvideo node, MMAP, no preload (the daemon, v4l2cuse-usb, vhci-hcd
#        and uvcvideo all in the figure),
#   (d)  v4l2loopback fed by ffmpeg (MMAP), if its DKMS module was built for
#        the guest kernel (apt-get install v4l2loopback-dkms
#        linux-headers-<kver> on the host); skipped with a note otherwise.
# Each line reports delivered fps, the system-wide busy CPU per frame from
# /proc/stat (all CPUs: the daemon's or ffmpeg's work counts) and from every
# task's scheduler run time (task_ms_per_frame, bench/bench.h), the spacing
# of the timestamps and the sequence gaps, and the host's load average; for
# v4l2cuse also the daemon's own CPU per frame it produced and its
# counters (`v4l2cuse-ctl stats`: CUSE requests per delivered frame,
# frames through the fast path, the client's wake-ups of the daemon per
# delivered frame), sampled by the tools' window hook before
# their warm-up and right after their measured window.
#
# Run from the host (TSC clock source: reading the clock is then no system
# call in the guest):
#   V4L2CUSE_VM_APPEND="clocksource=tsc tsc=reliable" \
#       tests/vm/vm-run.sh bench/vm-mmap-bench.sh [SECONDS [ROUNDS [SIZES]]]
# ROUNDS (default 1) runs every case of a size that many times in turn,
# a line each, to show the spread within the boot, and ends with the
# medians over the rounds and the ratios to vivid (and v4l2loopback) of
# the medians (lines "median ..." and "ratio ..."); SIZES defaults to
# "640x480 1280x720"; the bench's device offers exactly SIZES. The lines land in
# <build>/vm-results/vm-mmap-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-10}
rounds=${2:-1}
sizes=${3:-640x480 1280x720}
B=$V4L2CUSE_BUILD
run=$B/preload/v4l2cuse-run
ctl=$B/daemon/v4l2cuse-ctl
out=$V4L2CUSE_RESULTS/results.txt
T=$(mktemp -d)
: >"$out"

vm_modprobe cuse
vm_modprobe vivid n_devs=1 node_types=0x1
vm_modprobe vhci-hcd
vm_modprobe uvcvideo
vm_wait_node /dev/cuse 10
vivid=$(vm_find_video 'vivid-000-vid-cap') || bail_out "no vivid capture node"

cat >"$T/bench.conf" <<CONF
[daemon]
control-socket = $T/ctl.sock
[device bench]
node = video42
source = pattern,sizes=${sizes// /+}
label = bench
usb = true
CONF
export V4L2CUSE_CTL_SOCKET=$T/ctl.sock
"$B/daemon/v4l2cuse" --config "$T/bench.conf" >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
daemon_pid=$!
vm_on_exit kill $daemon_pid
vm_wait_node /dev/video42 20 || bail_out "no /dev/video42"
for _ in $(seq 300); do
	usbnode=$(vm_find_video 'bench: *') && break
	sleep 0.1
done
[[ -n ${usbnode:-} ]] || bail_out "no uvcvideo node of the bench device (usb=true)"

echo "kernel $(uname -r) clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"cmdline: $(cat /proc/cmdline)" | tee -a "$out"

# v4l2loopback, if the host built it for this kernel.
loop=
if vm_v4l2loopback 50 card_label=loopback; then
	loop=/dev/video50
else
	diag "(d) skipped"
fi

idle()
{
	local b0 t0 b1 t1
	read -r b0 t0 <<<"$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"
	sleep "$secs"
	read -r b1 t1 <<<"$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"
	echo "idle busy_ms_per_s=$(((b1 - b0) * 1000 / $(getconf CLK_TCK) / secs)) host_load=$(vm_host_load)" |
		tee -a "$out"
}
check "idle baseline" idle
for d in /dev/video42 "$vivid"; do
	check "rtt $d" bash -c "'$B/bench/v4l2-bench' rtt $d 300 | tee -a '$out'"
done

# The window hook (bench/bench.h): the daemon's CPU ticks, the bench
# device's counters and the host's load, before the tool's warm-up and
# right after its window; the daemon's figures are for that span (CPU per
# frame it produced, CUSE requests per frame it delivered).
cat >"$T/hook" <<'HOOK'
#!/bin/bash
# Few processes: each start costs ~0.1-0.3 s under TCG.
{
	read -r -a st <"/proc/$BENCH_DAEMON/stat"
	read -r _ load _ <<<"$(tail -n 1 "$BENCH_LOAD")"
	"$BENCH_CTL" stats | awk -v cpu=$((st[13] + st[14])) -v load="$load" '
		/^\[/ { g = $0 == "[device bench]"; next }
		g { v[$1] = $2 }
		END { print cpu, v["cuse-requests"], v["fast-frames"], v["produced"], v["delivered"],
			  v["ticks-lost"], load, v["fast-wakeups"] }'
} >"$BENCH_DIR/hook-$1"
HOOK
chmod +x "$T/hook"
export BENCH_CTL=$ctl BENCH_DAEMON=$daemon_pid BENCH_LOAD=$V4L2CUSE_RESULTS/.vm/host-load BENCH_DIR=$T

# attributed CASE CMD...: run CMD with the window hook (it prints frames=N),
# add the daemon's figures from its hook-to-hook span; the line starts
# with case=CASE (for the summary).
attributed()
{
	local line frames c0 c1 hz tag=$1
	shift
	rm -f "$T/hook-start" "$T/hook-end"
	line="case=$tag $(V4L2_BENCH_HOOK=$T/hook "$@")" || return
	frames=$(sed -n 's/.* frames=\([0-9]*\) .*/\1/p' <<<"$line")
	read -r -a c0 <"$T/hook-start"
	read -r -a c1 <"$T/hook-end"
	hz=$(getconf CLK_TCK)
	echo "$line $(awk -v f="$frames" -v hz="$hz" \
		-v dt=$((c1[0] - c0[0])) -v req=$((c1[1] - c0[1])) -v fast=$((c1[2] - c0[2])) \
		-v prod=$((c1[3] - c0[3])) -v deliv=$((c1[4] - c0[4])) -v lost=$((c1[5] - c0[5])) \
		-v wake=$((c1[7] - c0[7])) \
		'BEGIN { printf "daemon_ms_per_produced=%.2f produced=%d delivered=%d cuse_req_per_frame=%.3f fast_frames=%d fast_wakeups_per_frame=%.3f ticks_lost=%d",
			 prod ? dt * 1000 / hz / prod : 0, prod, deliv, deliv ? req / deliv : 0, fast, deliv ? wake / deliv : 0, lost }') host_load=${c0[6]}..${c1[6]}" |
		tee -a "$out"
}

# plain CASE CMD...: a line for a kernel driver, with the host's load.
plain()
{
	local l0 line tag=$1
	shift
	l0=$(vm_host_load)
	line="case=$tag $("$@")"
	echo "$line host_load=$l0..$(vm_host_load)" | tee -a "$out"
}

for size in $sizes; do
for ((round = 1; round <= rounds; round++)); do
	check "(a) v4l2cuse shim mmap, fast path, $size" attributed a \
		"$run" "$B/bench/v4l2-mmap-bench" /dev/video42 $size 30 "$secs"
	check "(a0) v4l2cuse shim mmap, V4L2CUSE_FASTPATH=0, $size" attributed a0 \
		env V4L2CUSE_FASTPATH=0 "$run" "$B/bench/v4l2-mmap-bench" /dev/video42 $size 30 "$secs"
	check "(b) v4l2cuse read $size" attributed b \
		"$B/bench/v4l2-bench" read /dev/video42 $size 30 "$secs"
	check "(b1) v4l2cuse shim read, fast path, $size" attributed b1 \
		"$run" "$B/bench/v4l2-bench" read /dev/video42 $size 30 "$secs"
	check "(u) v4l2cuse USB face, uvcvideo mmap, $size" attributed u \
		"$B/bench/v4l2-mmap-bench" "$usbnode" $size 30 "$secs"
	check "(c) vivid mmap $size" plain c-mmap "$B/bench/v4l2-mmap-bench" "$vivid" $size 30 "$secs"
	check "(c) vivid read $size" plain c-read "$B/bench/v4l2-bench" read "$vivid" $size 30 "$secs"
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
		check "(d) v4l2loopback mmap $size (ffmpeg feeding)" plain d \
			"$B/bench/v4l2-mmap-bench" $loop $size 30 "$secs"
		kill "$feeder" 2>/dev/null || true
		wait "$feeder" 2>/dev/null || true
	fi
done
done
# The summary: per size and case the median over the rounds of the busy
# CPU per frame (/proc/stat, and the tasks' run time) and of the fps; per
# size the ratio of v4l2cuse's to the kernel driver's medians, with the
# range of the ratios round by round (the cases of a round run one after
# the other, so a round's ratio shares its minute of the host's load).
summary()
{
	awk '
	function val(k) { return match($0, " " k "=[^ ]+") ? substr($0, RSTART + length(k) + 2, RLENGTH - length(k) - 2) + 0 : -1 }
	function div(a, b) { return b > 0 ? a / b : 0 }
	function median(list,   v, n, i, j, t) {
		n = split(list, v, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	/^case=/ {
		c = substr($1, 6); sz = $0; sub(/.* size=/, "", sz); sub(/ .*/, "", sz)
		k = sz SUBSEP c; n[k]++
		stat[k] = stat[k] " " val("cpu_ms_per_frame"); task[k] = task[k] " " val("task_ms_per_frame")
		fps[k] = fps[k] " " val("fps")
		round[k, n[k]] = val("cpu_ms_per_frame"); tround[k, n[k]] = val("task_ms_per_frame")
		if (!(sz in seen)) { seen[sz] = 1; sizes[++ns] = sz }
	}
	END {
		split("a a0 b b1 u c-mmap c-read d", cases, " ")
		for (s = 1; s <= ns; s++) {
			sz = sizes[s]
			for (i = 1; i <= 8; i++) {
				k = sz SUBSEP cases[i]
				if (!n[k]) continue
				printf "median size=%s case=%s rounds=%d cpu_ms_per_frame=%.2f task_ms_per_frame=%.2f fps=%.2f\n",
					sz, cases[i], n[k], median(stat[k]), median(task[k]), median(fps[k])
			}
			split("a:c-mmap a0:c-mmap b:c-read b1:c-read u:c-mmap u:a d:c-mmap a:d", pairs, " ")
			for (i = 1; i <= 8; i++) {
				split(pairs[i], p, ":"); x = sz SUBSEP p[1]; y = sz SUBSEP p[2]
				if (!n[x] || !n[y]) continue
				lo = tlo = 1e9; hi = thi = 0
				for (r = 1; r <= n[x] && r <= n[y]; r++) {
					q = div(round[x, r], round[y, r])
					lo = q < lo ? q : lo; hi = q > hi ? q : hi
					q = div(tround[x, r], tround[y, r])
					tlo = q < tlo ? q : tlo; thi = q > thi ? q : thi
				}
				printf "ratio size=%s %s/%s stat=%.2f (rounds %.2f..%.2f) tasks=%.2f (rounds %.2f..%.2f)\n",
					sz, p[1], p[2], div(median(stat[x]), median(stat[y])), lo, hi,
					div(median(task[x]), median(task[y])), tlo, thi
			}
		}
	}' "$out" >"$T/summary"
	tee -a "$out" <"$T/summary"
}
check "summary" summary
diag "results:"
sed 's/^/#   /' "$out"
