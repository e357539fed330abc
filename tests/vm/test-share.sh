#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One camera, many apps: a shared device (share=true) and two devices on
# one camera, with real clients.
#
#  1. The shared pattern device serves two read() consumers
#     (tests/vm/share-client.c) and one MMAP consumer
#     (v4l2cuse-run v4l2-ctl --stream-mmap) at once: their streaming
#     intervals overlap, each gets every frame it asked for, whole, with the
#     75% bars, and the reader that leaves first disturbs nobody.
#  2. A consumer SIGKILLed while parked in DQBUF (under the shim with
#     V4L2CUSE_FASTPATH=0, so that the DQBUF parks in the daemon): the others keep
#     streaming; its queue, memfds, mappings and parked request are gone
#     (v4l2cuse-ctl stats: consumers, parked, shim-mappings; the daemon's
#     memfd count).
#
# "At the same time" is made so, not hoped for: a consumer that must
# overlap another streams until told to stop (share-client FRAMES 0, then
# SIGTERM), and the daemon's consumer count says when both stream.
#  3. Two devices on one vivid camera (one through a symlink, as a
#     /dev/v4l/by-id link) stream at the same time at 640x480 and 640x360,
#     both showing vivid's bars; the daemon holds the camera open once, and
#     v4l2cuse-ctl list says which devices share it.
#  4. share= switched by SIGHUP while another device streams: that
#     consumer is not disturbed.
#  5. v4l2-compliance -s on a shared device, plain and under the shim:
#     the only failures are the checks that require EBUSY from a second
#     handle (docs/sharing.md explains them).
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

client=$V4L2CUSE_BUILD/tests/vm/share-client
T=$(mktemp -d)
W=320
H=240

vm_require v4l2-ctl v4l2-compliance || bail_out "missing programs"
[[ -x $client ]] || bail_out "$client is not built"
vm_modprobe cuse
vm_wait_node /dev/cuse 10
cam=$(vm_load_vivid) || bail_out "vivid did not come up"
diag "vivid capture node: $cam"
ln -s "$cam" "$T/camera-by-id"

write_conf()
{
	cat >"$T/v4l2cuse.conf" <<CONF
[daemon]
control-socket = $T/ctl.sock

[device shared]
node = video42
source = pattern
size = ${W}x$H
format = YUYV
frame-rate = 15
min-buffers = 6
share = $1

[device cam1]
node = video43
source = uvc:$cam
size = 640x480
format = YUYV

[device cam2]
node = video44
source = uvc:$T/camera-by-id
size = 640x360
format = YUYV

# v4l2-compliance's (section 5): slow enough that the tool never runs out
# of queued buffers (see there).
[device comp]
node = video45
source = pattern
size = ${W}x$H
format = YUYV
frame-rate = 5
min-buffers = 16
share = true
CONF
}
write_conf true
vm_start_daemon video42 video43 video44 video45 -- --config "$T/v4l2cuse.conf"

export V4L2CUSE_CTL_SOCKET=$T/ctl.sock

# dev_stat ID KEY: KEY of device ID in v4l2cuse-ctl stats.
dev_stat()
{
	timeout 30 "$ctl" stats | vm_stat "$2" "device $1"
}

# wait_stat ID KEY OP VALUE [TIMEOUT_S]: until KEY of device ID compares
# (OP: -eq, -ge, -le) to VALUE (default 120 s of wall time); returns 1 if
# it never did.
wait_stat()
{
	local end=$((SECONDS + ${5:-120})) v
	while :; do
		v=$(dev_stat "$1" "$2")
		[[ $v =~ ^[0-9]+$ ]] && test "$v" "$3" "$4" && return 0
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}

# shared_stats_until LABEL TEST: poll v4l2cuse-ctl stats into st until the
# function TEST holds of them (120 s of wall time at most; TEST returning 2
# gives up at once), then show device shared's rows as the comment LABEL.
# Returns 1 if TEST never held.
shared_stats_until()
{
	local end=$((SECONDS + 120)) rc=1 t
	while ((SECONDS < end)); do
		st=$(timeout 30 "$ctl" stats)
		t=0
		"$2" || t=$?
		if ((t != 1)); then
			((t != 0)) || rc=0
			break
		fi
		sleep 0.1
	done
	diag "$1: $(awk '$0 == "[device shared]" { d = 1; next } /^\[/ { d = 0 } d' <<<"$st" | tr '\n' ' ')"
	return $rc
}

memfds()
{
	find "/proc/$daemon_pid/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null |
		grep -c '^/memfd:' || true
}

# client_result LOG KEY: a key=value of a share-client summary line.
client_result()
{
	grep -oE "\\b$2=[^ ]+" "$1" | head -1 | cut -d= -f2
}

# --- 1. two readers and an MMAP consumer at once ---------------------------------

# r1 and r2 stream until stopped; the MMAP consumer takes its 60 frames
# while both do; then r2 leaves first, and r1 goes on.
"$client" /dev/video42 read 0 >"$T/r1.out" 2>&1 &
r1=$!
vm_on_exit kill "$r1"
wait_stat shared consumers -ge 1 || true
"$client" /dev/video42 read 0 >"$T/r2.out" 2>&1 &
r2=$!
vm_on_exit kill "$r2"
if wait_stat shared consumers -ge 2; then
	ok "two read() consumers stream the shared device at the same time"
else
	not_ok "two read() consumers stream the shared device at the same time" \
		"consumers: $(dev_stat shared consumers)"
fi
st_r1=0 st_r2=0 st_m1=0
timeout 300 "$run" v4l2-ctl -d /dev/video42 --stream-mmap=4 --stream-count=60 \
	--stream-to="$T/mmap.yuyv" --verbose >"$T/mmap.out" 2>&1 || st_m1=$?
kill -TERM "$r2"
wait "$r2" || st_r2=$?
# r1 alone for 10 more frames of the device.
d=$(dev_stat shared delivered)
wait_stat shared delivered -ge $((d + 10)) || true
kill -TERM "$r1"
wait "$r1" || st_r1=$?
cat "$T/r1.out" "$T/r2.out" >"$R/readers.log"
cp "$T/mmap.out" "$R/mmap.log"
sed 's/^/#   /' "$R/readers.log"
n1=$(client_result "$T/r1.out" frames)
n2=$(client_result "$T/r2.out" frames)
if ((st_r1 == 0 && st_r2 == 0)) && [[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ ]] && ((n2 > 0 && n1 > n2)); then
	ok "two read() consumers: $n1 and $n2 whole frames with the bars, the first on after the second left"
else
	not_ok "two read() consumers: whole frames with the bars, the first on after the second left" \
		"status $st_r1 and $st_r2, frames $n1 and $n2" "$(tail -5 "$R/readers.log")"
fi
mmap_size=$(stat -c %s "$T/mmap.yuyv" 2>/dev/null || echo 0)
if ((st_m1 == 0 && mmap_size == 60 * W * H * 2)); then
	ok "v4l2cuse-run v4l2-ctl --stream-mmap while both read: 60 whole frames"
else
	not_ok "v4l2cuse-run v4l2-ctl --stream-mmap while both read: 60 whole frames" \
		"status $st_m1, $mmap_size bytes" "$(tail -5 "$R/mmap.log")"
fi
# The last MMAP frame shows the bars (share-client reads a saved frame too).
tail -c $((W * H * 2)) "$T/mmap.yuyv" >"$T/last.yuyv"
check "the MMAP consumer's last frame shows the bars" python3 - "$T/last.yuyv" $W $H <<'PY'
import sys
bars = [(180, 128, 128), (161, 44, 142), (131, 156, 44), (112, 72, 58),
        (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128)]
f = open(sys.argv[1], "rb").read()
w, h = int(sys.argv[2]), int(sys.argv[3])
row = h * 3 // 4
for i, want in enumerate(bars):
    x = ((2 * i + 1) * w // 16) & ~1
    b = (row * w + x) * 2
    got = (f[b], f[b + 1], f[b + 3])
    if any(abs(g - v) > 8 for g, v in zip(got, want)):
        sys.exit(f"bar {i}: {got}, want {want}")
PY
seqs=$(grep -oE 'seq: *[0-9]+' "$R/mmap.log" | grep -oE '[0-9]+' || true)
if [[ -n $seqs ]]; then
	if awk 'NR > 1 && $1 <= prev { bad = 1 } { prev = $1 } END { exit bad }' <<<"$seqs"; then
		ok "v4l2-ctl's sequence numbers increase ($(head -1 <<<"$seqs")..$(tail -1 <<<"$seqs"), $(wc -l <<<"$seqs") frames)"
	else
		not_ok "v4l2-ctl's sequence numbers increase" "$(tr '\n' ' ' <<<"$seqs")"
	fi
fi

# --- 2. a consumer SIGKILLed while parked in DQBUF --------------------------------

"$client" /dev/video42 read 0 >"$T/survivor.out" 2>&1 &
survivor=$!
vm_on_exit kill "$survivor"
wait_stat shared consumers -ge 1 || true
m0=$(memfds)
# Without the shim's fast path: through it a blocking DQBUF waits in the
# shim, not parked in the daemon (test-faults.sh kills one waiting there).
V4L2CUSE_FASTPATH=0 "$run" "$client" /dev/video42 mmap 0 >"$T/victim.out" 2>&1 &
victim=$!
vm_on_exit kill "$victim"
# Both parked at once: at 15 fps each waits most of the time.
parked=0
# both_parked: the victim lives and both consumers wait in DQBUF/read().
both_parked()
{
	kill -0 "$victim" 2>/dev/null || return 2
	[[ $(vm_stat consumers "device shared" <<<"$st") == 2 &&
		$(vm_stat parked "device shared" <<<"$st") -ge 2 ]]
}
shared_stats_until "before the kill" both_parked && parked=1
if ((parked)); then
	ok "two consumers, both parked in DQBUF/read()"
else
	not_ok "two consumers parked" "$(cat "$T/victim.out")"
fi
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
frames_at_kill=$(grep -c . "$T/survivor.out" || true)
# The daemon hears of the death through the release and the shim socket.
released=0
# victim_gone: one consumer left, no parked request or mapping of the victim.
victim_gone()
{
	[[ $(vm_stat consumers "device shared" <<<"$st") == 1 &&
		$(vm_stat parked "device shared" <<<"$st") -le 1 &&
		$(vm_stat shim-mappings "device shared" <<<"$st") == 0 ]]
}
shared_stats_until "after the kill" victim_gone && released=1
if ((released)); then
	ok "after SIGKILL: one consumer left, no parked request and no mapping of the victim"
else
	not_ok "after SIGKILL: the victim's queue, parked request and mappings are gone"
fi
m1=$(memfds)
if ((m1 == m0)); then ok "daemon memfds back to $m0 (the victim's buffers freed)"; else not_ok "daemon memfds back to $m0" "$m1"; fi
# The survivor keeps streaming: its frame count moves on (read FRAMES=0 runs until killed).
kill -TERM "$survivor"
wait "$survivor" 2>/dev/null || true
sed 's/^/#   /' "$T/survivor.out"
n=$(client_result "$T/survivor.out" frames)
b=$(client_result "$T/survivor.out" bars)
if [[ -n $n && $n -gt 0 && $n == "$b" ]]; then
	ok "the other consumer streamed on: $n frames, all with the bars"
else
	not_ok "the other consumer streamed on" "frames=$n bars=$b (at kill: $frames_at_kill)"
fi

# --- 3. two devices on one camera ------------------------------------------------

# cam2 first (the camera at 640x360, frames straight through), then cam1
# at a larger size: the camera restarts at 640x480 and serves both. cam2
# streams until cam1 has its 20 frames.
"$client" /dev/video44 read 0 >"$T/cam2.out" 2>&1 &
c2=$!
vm_on_exit kill "$c2"
wait_stat cam2 consumers -ge 1 || true
"$client" /dev/video43 read 20 >"$T/cam1.out" 2>&1 &
c1=$!
both=0
wait_stat cam1 consumers -ge 1 && [[ $(dev_stat cam2 consumers) -ge 1 ]] && both=1
"$ctl" list >"$R/list-cameras.txt" 2>&1 || true
opens=$(find "/proc/$daemon_pid/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' | grep -cx "$cam" || true)
st_c1=0 st_c2=0
wait "$c1" || st_c1=$?
kill -TERM "$c2"
wait "$c2" || st_c2=$?
cat "$T/cam1.out" "$T/cam2.out" | sed 's/^/#   /'
n2=$(client_result "$T/cam2.out" frames)
if ((st_c1 == 0 && st_c2 == 0)) && [[ $n2 =~ ^[0-9]+$ ]] && ((n2 > 0)); then
	ok "two devices on one vivid camera at 640x480 and 640x360: 20 and $n2 frames with vivid's bars"
else
	not_ok "two devices on one vivid camera: frames with vivid's bars" "status $st_c1 $st_c2"
fi
if ((both)); then
	ok "both camera devices streamed at the same time"
else
	not_ok "both camera devices streamed at the same time" \
		"consumers: cam1 $(dev_stat cam1 consumers), cam2 $(dev_stat cam2 consumers)"
fi
if ((opens == 1)); then ok "the daemon has the camera open once"; else not_ok "the daemon has the camera open once" "$opens fds on $cam"; fi
sed 's/^/#   /' "$R/list-cameras.txt"
check "v4l2cuse-ctl list shows cam1 and cam2 sharing their input" bash -c \
	"grep -A1 '^cam1 ' '$R/list-cameras.txt' | grep -q 'input shared with: cam2' &&
	 grep -A1 '^cam2 ' '$R/list-cameras.txt' | grep -q 'input shared with: cam1'"

# --- 4. share= switched while another device streams -------------------------------

# cam1's consumer streams before, during and after the reload.
"$client" /dev/video43 read 0 >"$T/cam-reload.out" 2>&1 &
c3=$!
vm_on_exit kill "$c3"
wait_stat cam1 consumers -ge 1 || true
write_conf false
kill -HUP "$daemon_pid"
wait_log()
{
	local end=$((SECONDS + 120))
	until grep -q "$1" "$R/daemon.log"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}
check "SIGHUP applied share=false live" wait_log 'video42: share=false'
d=$(dev_stat cam1 delivered)
wait_stat cam1 delivered -ge $((d + 10)) || true
kill -TERM "$c3"
st_c3=0
wait "$c3" || st_c3=$?
sed 's/^/#   /' "$T/cam-reload.out"
n3=$(client_result "$T/cam-reload.out" frames)
if ((st_c3 == 0)) && [[ $n3 =~ ^[0-9]+$ ]] && ((n3 >= 10)); then
	ok "cam1's consumer streamed through the reload undisturbed ($n3 frames)"
else
	not_ok "cam1's consumer streamed through the reload" "status $st_c3, frames $n3"
fi
"$ctl" list >"$R/list-exclusive.txt" 2>&1 || true
check "v4l2cuse-ctl list: video42 is exclusive now (CONSUMERS N/1)" \
	awk '$1 == "shared" && $7 ~ /\/1$/ { f = 1 } END { exit !f }' "$R/list-exclusive.txt"
write_conf true
kill -HUP "$daemon_pid"
check "SIGHUP applied share=true again" wait_log 'video42: share=true'

# --- 5. v4l2-compliance on the shared device -----------------------------------------

# A shared device gives every handle its own queue: the check that wants
# EBUSY when a second handle asks for buffers while the first one has them
# fails, by design (docs/sharing.md). Everything else must pass. The tool
# warns of every sequence gap, and a queue misses a frame whenever the tool
# has not given a buffer back for min-buffers frame periods: under the
# shim on a loaded TCG host it stalled that long 3 and 51 times at 15 fps
# with 6 buffers (400 ms). Its device (comp) runs at 5 fps with 16 buffers:
# a gap now needs a 3 s stall.
expected_failures='^v4l2-test-buffers.cpp\([0-9]+\): q2.reqbufs\(node->node2, 1\) != EBUSY$'
compliance()
{
	local log=$1
	shift
	timeout 900 "$@" -d /dev/video45 -s >"$log" 2>&1 || true
	{ grep -E '^[[:space:]]*fail:' "$log" || true; } | sed -E 's/^[[:space:]]*fail: //; s/ \(.*//' | sort -u
}
for mode in plain shim; do
	if [[ $mode == plain ]]; then
		fails=$(compliance "$R/compliance-plain.log" v4l2-compliance)
	else
		fails=$(compliance "$R/compliance-shim.log" "$run" v4l2-compliance)
	fi
	totals=$(grep -E '^Total' "$R/compliance-$mode.log" || true)
	diag "v4l2-compliance ($mode): $totals"
	unexpected=$(grep -vE "$expected_failures" <<<"$fails" || true)
	# A sequence gap that remains (a stall of the tool over 3 s on a loaded
	# host) is load, not a fault; any other warning counts.
	warnings=$({ grep -oE 'warn: .*' "$R/compliance-$mode.log" || true; } |
		grep -vE 'warn: v4l2-test-buffers.cpp\([0-9]+\): got sequence number [0-9]+, expected [0-9]+' || true)
	if [[ -n $totals && -z $unexpected && -z $warnings ]]; then
		ok "v4l2-compliance -s on the shared device ($mode): no failure but the documented one, no warning but sequence gaps"
	else
		not_ok "v4l2-compliance -s on the shared device ($mode)" "$totals" "$fails" "$warnings"
	fi
done
