#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The PipeWire bridge in steady state, in one VM boot: PipeWire and
# WirePlumber, v4l2cuse-pipewire, one pattern device of YUYV at 30 fps, and
# a consumer (gst-launch-1.0 pipewiresrc ! fakesink) of SIZE, in two cases:
#   (fast)   the bridge's capture on the shim's fast path (client/capture.c),
#   (cuse)   the same bridge with V4L2CUSE_FASTPATH=0: every QBUF, DQBUF
#            and wait a CUSE request, as the bridge streamed before client/
#            moved to the fast path.
# After a warm-up (the consumer's first frames, process start-up excluded),
# a window of SECONDS: the frames the daemon delivered, its CUSE requests
# per delivered frame (`v4l2cuse-ctl stats`), and the CPU per frame of the
# bridge, the daemon, PipeWire and the consumer (utime + stime of each from
# /proc/PID/stat; the bridge's is the figure that changes).
#
# Run from the host (TSC clock source, as the other benches):
#   V4L2CUSE_VM_APPEND="clocksource=tsc tsc=reliable" \
#       tests/vm/vm-run.sh bench/vm-bridge-bench.sh [SECONDS [ROUNDS [SIZE]]]
# Lines land in <build>/vm-results/vm-bridge-bench/results.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

secs=${1:-10}
rounds=${2:-2}
size=${3:-640x480}
B=$V4L2CUSE_BUILD
ctl=$B/daemon/v4l2cuse-ctl
bridge=$B/pw-bridge/v4l2cuse-pipewire
out=$V4L2CUSE_RESULTS/results.txt
T=$(mktemp -d)
: >"$out"

vm_require pipewire wireplumber pw-cli pw-dump jq dbus-daemon gst-launch-1.0 ||
	bail_out "missing programs"
[[ -x $bridge ]] || bail_out "$bridge is not built (meson -Dpipewire=enabled)"
# until SECS CMD...: CMD (a function too) succeeds within SECS.
until_ok()
{
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}
vm_modprobe cuse
vm_wait_node /dev/cuse 10

cat >"$T/bench.conf" <<CONF
[daemon]
control-socket = $T/ctl.sock
[device bench]
node = video42
label = bench
source = pattern,sizes=$size
formats = YUYV
frame-rates = 30
CONF
export V4L2CUSE_CTL_SOCKET=$T/ctl.sock
"$B/daemon/v4l2cuse" --config "$T/bench.conf" >"$V4L2CUSE_RESULTS/daemon.log" 2>&1 &
daemon_pid=$!
vm_on_exit kill $daemon_pid
vm_wait_node /dev/video42 60 || bail_out "no /dev/video42"

export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
dbus-daemon --session --fork --address="$DBUS_SESSION_BUS_ADDRESS" --print-pid >"$T/dbus.pid"
vm_on_exit bash -c 'kill $(cat '"$T"'/dbus.pid) 2>/dev/null; true'
cp -r /usr/share/wireplumber "$T/wpconf"
sed -i '/bluetooth.lua/d' "$T/wpconf/wireplumber.conf"
pipewire >"$V4L2CUSE_RESULTS/pipewire.log" 2>&1 &
pw_pid=$!
vm_on_exit kill $pw_pid
until_ok 120 pw-cli info 0 >/dev/null 2>&1 || bail_out "pipewire did not start"
WIREPLUMBER_CONFIG_DIR=$T/wpconf wireplumber >"$V4L2CUSE_RESULTS/wireplumber.log" 2>&1 &
wp_pid=$!
vm_on_exit kill $wp_pid

echo "kernel $(uname -r) clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" |
	tee -a "$out"

has_node()
{
	pw-dump 2>/dev/null | jq -e '.[] | select(.type == "PipeWire:Interface:Node") |
		select(.info.props."node.name" == "v4l2cuse.video42")' >/dev/null
}
# ticks PID: utime + stime of PID (0 once it has gone).
ticks()
{
	local st
	read -r -a st <"/proc/$1/stat" 2>/dev/null || { echo 0; return; }
	echo $((st[13] + st[14]))
}
# counter NAME: the bench device's counter NAME.
counter()
{
	"$ctl" stats | awk -v k="$1" '/^\[/ { g = $0 == "[device bench]"; next } g && $1 == k { print $2 }'
}

# one CASE ENV...: the bridge started with ENV, a consumer, the window.
one()
{
	local tag=$1 bp gp d0 d1 r0 r1 b0 b1 m0 m1 p0 p1 g0 g1 w0 w1 t0 t1 hz
	shift
	env "$@" "$bridge" >"$V4L2CUSE_RESULTS/bridge-$tag.log" 2>&1 &
	bp=$!
	until_ok 120 has_node || { echo "the bridge did not publish v4l2cuse.video42 ($tag)"; return 1; }
	gst-launch-1.0 -q pipewiresrc target-object=v4l2cuse.video42 ! \
		"video/x-raw,format=YUY2,width=${size%x*},height=${size#*x}" ! fakesink \
		>"$V4L2CUSE_RESULTS/gst-$tag.log" 2>&1 &
	gp=$!
	# Warm-up: frames flow (the daemon delivers), then one more second.
	d0=$(counter delivered)
	for _ in $(seq 600); do
		(($(counter delivered) > d0 + 10)) && break
		sleep 0.2
	done
	sleep 1
	read -r d0 r0 <<<"$(counter delivered) $(counter cuse-requests)"
	b0=$(ticks $bp) m0=$(ticks $daemon_pid) p0=$(ticks $pw_pid) g0=$(ticks $gp) w0=$(ticks $wp_pid)
	t0=$EPOCHREALTIME
	sleep "$secs"
	read -r d1 r1 <<<"$(counter delivered) $(counter cuse-requests)"
	b1=$(ticks $bp) m1=$(ticks $daemon_pid) p1=$(ticks $pw_pid) g1=$(ticks $gp) w1=$(ticks $wp_pid)
	t1=$EPOCHREALTIME	# the window is SECONDS plus the samples' own time
	kill $gp $bp 2>/dev/null || true
	wait $gp $bp 2>/dev/null || true
	hz=$(getconf CLK_TCK)
	awk -v tag="$tag" -v size="$size" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v hz="$hz" -v f=$((d1 - d0)) \
		-v req=$((r1 - r0)) -v b=$((b1 - b0)) -v m=$((m1 - m0)) -v p=$((p1 - p0)) \
		-v g=$((g1 - g0)) -v w=$((w1 - w0)) -v load="$(vm_host_load)" '
		function ms(t) { return f ? t * 1000 / hz / f : 0 }
		BEGIN { printf "case=%s size=%s frames=%d window_s=%.2f fps=%.2f cuse_req_per_frame=%.3f bridge_ms_per_frame=%.2f daemon_ms_per_frame=%.2f pipewire_ms_per_frame=%.2f wireplumber_ms_per_frame=%.2f consumer_ms_per_frame=%.2f host_load=%s\n",
			tag, size, f, s, f / s, f ? req / f : 0, ms(b), ms(m), ms(p), ms(w), ms(g), load }' |
		tee -a "$out"
	# The node goes with the bridge; wait so that the next bridge's is its own.
	until_ok 60 bash -c '! pw-dump 2>/dev/null | grep -q "\"v4l2cuse.video42\""' || true
}

for ((round = 1; round <= rounds; round++)); do
	check "(fast) the bridge on the fast path, $size, round $round" one fast
	check "(cuse) the bridge with V4L2CUSE_FASTPATH=0, $size, round $round" one cuse V4L2CUSE_FASTPATH=0
done
# Medians over the rounds, per case.
awk '
	function val(k) { return match($0, " " k "=[^ ]+") ? substr($0, RSTART + length(k) + 2, RLENGTH - length(k) - 2) + 0 : -1 }
	BEGIN { nk = split("fps cuse_req_per_frame bridge_ms_per_frame daemon_ms_per_frame", k, " ") }
	/^case=/ { c = substr($1, 6); n[c]++; for (j = 1; j <= nk; j++) v[c, j, n[c]] = val(k[j]) }
	END {
		for (c in n) {
			line = "median case=" c
			for (j = 1; j <= nk; j++) {
				m = n[c]
				for (a = 1; a <= m; a++) x[a] = v[c, j, a]
				for (a = 2; a <= m; a++)
					for (b = a; b > 1 && x[b - 1] > x[b]; b--) { t = x[b]; x[b] = x[b - 1]; x[b - 1] = t }
				line = line " " k[j] "=" (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2)
			}
			print line
		}
	}' "$out" | tee -a "$out"
