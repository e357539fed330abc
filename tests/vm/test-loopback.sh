#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Loopback with real writers and readers: the device "lb" (/dev/video42,
# shared, 320x240 YUYV) is fed by its writer node /dev/video43.
#
#  1. Before any writer: a reader gets whole frames at once (the
#     placeholder), STREAMON/read() never fail, SIGNAL is lost.
#  2. `ffmpeg -re -f lavfi -i testsrc2=size=640x480 -pix_fmt yuyv422 -f v4l2`
#     feeds a read() reader and an MMAP reader under v4l2cuse-run at
#     320x240: testsrc2's six bars at known positions; ctl list names the
#     writer.
#  2b. GStreamer's v4l2sink under v4l2cuse-run (output streaming, MMAP)
#     feeds a reader.
#  3. A reader streams 300 whole frames while the writer exits and another
#     starts at another size and format (320x240 yuv420p).
#  4. Bad writers (tests/vm/lb-writer.py): garbage S_FMT adjusted, a capture
#     type refused, a whole frame before any S_FMT taken, a short write
#     taken but never shown, a second writer EBUSY, a writer SIGKILLed while
#     writing; the readers never see anything but whole frames.
#  4b. Apps made for v4l2loopback, on the device "pv" (/dev/video46, its
#     writer node /dev/video47 with compat=1): v4l2-relayd's watch
#     (tests/vm/relayd-client, both event ids) gets usage=0 at once, 1 while
#     a reader streams, 0 after; pyvirtualcam's writer
#     (tests/vm/pyvcam-client) finds /dev/video47 by its probe, passing over
#     the writer nodes without compat, and its I420 and YUYV frames reach
#     a read() and an MMAP reader as the 75% bars.
#  5. v4l2-compliance -s on a capture node (an exclusive one: lb2) and on a
#     writer node, plain and under the shim: 0 failures, 0 warnings but the
#     sequence gaps of a tool stalled by a loaded host.
#  6. /dev/v4l2loopback with v4l2loopback-ctl's calls (tests/vm/lbctl-client.c):
#     add a device (0600 node, VERSION 0.15.0), query it by either node,
#     list it; ffmpeg writes into the number ADD returned and a reader gets
#     its frames; delete is EBUSY while it writes, then both nodes go; the
#     errors (ENODEV, EEXIST, EINVAL, ENOTTY); the 0.13/0.14 numbers; add
#     without options; v4l2loopback-ctl itself where installed.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

client=$V4L2CUSE_BUILD/tests/vm/share-client
lbctl=$V4L2CUSE_BUILD/tests/vm/lbctl-client
writer=$V4L2CUSE_SRC/tests/vm/lb-writer.py
pyvcam=$V4L2CUSE_BUILD/tests/vm/pyvcam-client
relayd=$V4L2CUSE_BUILD/tests/vm/relayd-client
T=$(mktemp -d)

vm_require v4l2-ctl v4l2-compliance ffmpeg python3 || bail_out "missing programs"
vm_modprobe cuse
vm_wait_node /dev/cuse 10

cat >"$T/v4l2cuse.conf" <<'CONF'
[device lb]
node = video42
source = loopback:video43,sizes=320x240+640x480,fps=15
size = 320x240
format = YUYV
frame-rate = 15
min-buffers = 6
share = true

# An exclusive one, for v4l2-compliance under the shim (on a shared node one
# check differs by design: docs/sharing.md).
[device lb2]
node = video44
source = loopback:video45,sizes=320x240,fps=15
size = 320x240
frame-rate = 15
min-buffers = 6

# compat=1: its writer node passes for v4l2loopback's (pyvirtualcam, 4b).
[device pv]
node = video46
source = loopback:video47,sizes=320x240,fps=15,compat=1
size = 320x240
format = YUYV
frame-rate = 15
min-buffers = 6
CONF
vm_start_daemon video42 video43 video44 video45 video46 video47 -- --config "$T/v4l2cuse.conf"

# ctl_rows [ID]: the row of the device ID (default lb) and its indented lines.
ctl_rows()
{
	"$ctl" list 2>&1 | awk -v id="${1:-lb}" '/^[^ ]/ { in_dev = $1 == id } in_dev'
}

# start_ffmpeg SIZE PIX_FMT LOG: an ffmpeg writer of testsrc2 on /dev/video43
# (10 minutes at most, stopped at exit); its pid in ffpid.
start_ffmpeg()
{
	ffmpeg -nostdin -loglevel error -re -f lavfi -i "testsrc2=size=$1" -pix_fmt "$2" \
		-t 600 -f v4l2 /dev/video43 >"$R/$3" 2>&1 &
	ffpid=$!
	vm_on_exit kill "$ffpid"
}

# wait_writer ERE [TIMEOUT_S]: until the lb device's rows in v4l2cuse-ctl list
# match ERE (default 300 s); the checks that follow tell if it never did.
wait_writer()
{
	local end=$((SECONDS + ${2:-300}))
	until ctl_rows | grep -qE "$1" || ((SECONDS > end)); do
		sleep 1
	done
}

# --- 1. before any writer ------------------------------------------------------------

check "before any writer: 10 whole frames at once (the placeholder)" \
	timeout 120 "$client" /dev/video42 read 10 0 none
ctl_rows >"$R/list-before.txt"
sed 's/^/#   /' "$R/list-before.txt"
check "v4l2cuse-ctl list: SIGNAL lost, no writer yet" bash -c \
	"awk '\$1 == \"lb\" && \$4 == \"lost\" { f = 1 } END { exit !f }' '$R/list-before.txt' &&
	 grep -q 'writer /dev/video43: no writer yet' '$R/list-before.txt'"

# --- 2. ffmpeg writes, two readers ----------------------------------------------------

start_ffmpeg 640x480 yuyv422 ffmpeg-1.log
ff1=$ffpid
# ffmpeg takes seconds to start under TCG: wait until it writes.
wait_writer 'connected, pid [0-9]+ \(ffmpeg\), 640x480/YUYV'
sleep 1
"$client" /dev/video42 read 30 0 testsrc2 >"$T/r1.out" 2>&1 &
r1=$!
"$run" "$client" /dev/video42 mmap 30 0 testsrc2 >"$T/m1.out" 2>&1 &
m1=$!
st1=0 st2=0
wait "$r1" || st1=$?
wait "$m1" || st2=$?
cat "$T/r1.out" "$T/m1.out" | sed 's/^/#   /'
if ((st1 == 0)); then ok "a read() reader at 320x240: 30 frames of testsrc2 (bars checked)"; else not_ok "a read() reader gets testsrc2" "status $st1"; fi
if ((st2 == 0)); then ok "an MMAP reader under v4l2cuse-run: 30 frames of testsrc2"; else not_ok "an MMAP reader gets testsrc2" "status $st2"; fi
ctl_rows >"$R/list-writing.txt"
sed 's/^/#   /' "$R/list-writing.txt"
check "v4l2cuse-ctl list: the writer is ffmpeg, 640x480/YUYV, SIGNAL ok" bash -c \
	"grep -qE 'writer /dev/video43: connected, pid [0-9]+ \\(ffmpeg\\), 640x480/YUYV' '$R/list-writing.txt' &&
	 awk '\$1 == \"lb\" && \$4 == \"ok\" { f = 1 } END { exit !f }' '$R/list-writing.txt'"

# --- 2b. GStreamer's v4l2sink (output streaming) under v4l2cuse-run -------------------------

kill "$ff1"
wait "$ff1" 2>/dev/null || true
# (videotestsrc renders YUY2 in BT.709: share-client's blue has those values.)
"$run" gst-launch-1.0 -q videotestsrc pattern=blue num-buffers=3000 \
	! video/x-raw,format=YUY2,width=320,height=240,framerate=15/1 \
	! v4l2sink device=/dev/video43 >"$R/gst-sink.log" 2>&1 &
gst=$!
vm_on_exit kill "$gst"
# gst-launch takes a minute or two to start under TCG.
wait_writer 'connected, pid [0-9]+ \(.*\), 320x240/YUYV' 400
ctl_rows >"$R/list-gst.txt"
sed 's/^/#   /' "$R/list-gst.txt"
check "v4l2cuse-ctl list: a writer connected, 320x240/YUYV" \
	grep -qE 'connected, pid [0-9]+ \(.*\), 320x240/YUYV' "$R/list-gst.txt"
sleep 2
check "a GStreamer v4l2sink writer under v4l2cuse-run feeds a reader (20 blue frames)" \
	timeout 120 "$client" /dev/video42 read 20 0 blue
kill "$gst"
wait "$gst" 2>/dev/null || true
start_ffmpeg 640x480 yuyv422 ffmpeg-1b.log
ff1=$ffpid
wait_writer 'connected, pid [0-9]+ \(ffmpeg\), 640x480/YUYV'

# --- 3. the writer changes under a streaming reader --------------------------------------

"$client" /dev/video42 read 300 0 none >"$T/long.out" 2>&1 &
long=$!
sleep 5
kill "$ff1"
wait "$ff1" 2>/dev/null || true
sleep 2
start_ffmpeg 320x240 yuv420p ffmpeg-2.log
ff2=$ffpid
# (ffmpeg takes seconds to start under TCG: the reader may finish before.)
wait_writer 'connected, pid [0-9]+ \(ffmpeg\), 320x240/YU12'
st=0
wait "$long" || st=$?
sed 's/^/#   /' "$T/long.out"
if ((st == 0)); then
	ok "a reader got 300 whole frames while the writer left and another came (YU12 320x240)"
else
	not_ok "a reader streams through a change of writers" "status $st"
fi
check "the second writer's frames reach readers (testsrc2 from YU12)" \
	timeout 120 "$client" /dev/video42 read 10 0 testsrc2
ctl_rows >"$R/list-second.txt"
check "v4l2cuse-ctl list: the writer is now 320x240/YU12" \
	grep -q 'connected, pid [0-9]* (ffmpeg), 320x240/YU12' "$R/list-second.txt"

# --- 4. bad writers ------------------------------------------------------------------------

"$client" /dev/video42 read 0 0 none >"$T/watch.out" 2>&1 &
watch=$!
vm_on_exit kill "$watch"
# ffmpeg still writes: a second writer is refused.
py_checks python3 - <<'PY'
import errno, os
fd = os.open("/dev/video43", os.O_RDWR)
try:
    os.write(fd, bytes(320 * 240 * 2))
    print("FAIL a second writer's write was taken")
except OSError as e:
    print(("PASS" if e.errno == errno.EBUSY else "FAIL") + f" a second writer's write: {e.strerror}")
PY
kill "$ff2"
wait "$ff2" 2>/dev/null || true
py_checks python3 "$writer" /dev/video43 captype badfmt nofmt short frames:5:100
python3 "$writer" /dev/video43 forever:150 >"$T/victim.out" 2>&1 &
victim=$!
sleep 3
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
py_checks python3 "$writer" /dev/video43 frames:10:60
kill -TERM "$watch"
wait "$watch" 2>/dev/null || true
sed 's/^/#   /' "$T/watch.out"
n=$(grep -oE 'frames=[0-9]+' "$T/watch.out" | cut -d= -f2)
wh=$(grep -oE 'whole=[0-9]+' "$T/watch.out" | cut -d= -f2)
if [[ -n $n && $n -gt 0 && $n == "$wh" ]]; then
	ok "a reader through the bad writers: $n frames, every one whole"
else
	not_ok "a reader through the bad writers gets whole frames" "frames=$n whole=$wh"
fi
ctl_rows >"$R/list-bad.txt"
sed 's/^/#   /' "$R/list-bad.txt"
check "v4l2cuse-ctl list counts the refused writes" \
	bash -c "grep -qE 'written, [1-9][0-9]* refused' '$R/list-bad.txt'"

# --- 4b. pyvirtualcam and v4l2-relayd (pv: compat=1) -------------------------------------

# v4l2-relayd's watch of the writer node, one per event id; the new id
# under v4l2cuse-run, where v4l2-relayd runs (POLLPRI from the fast path).
"$relayd" /dev/video47 old 900 >"$R/relayd-old.txt" 2>&1 &
rold=$!
vm_on_exit kill "$rold"
"$run" "$relayd" /dev/video47 new 900 >"$R/relayd-new.txt" 2>&1 &
rnew=$!
vm_on_exit kill "$rnew"

# usage_now: the newest count of each watcher, "usage=N usage=N" (old, new).
usage_now()
{
	local f
	for f in old new; do
		{ grep -oE '^usage=[0-9]+' "$R/relayd-$f.txt" || true; } | tail -1
	done | paste -sd ' '
}

# wait_usage N DESC: a check that both watchers' newest count becomes N (120 s).
wait_usage()
{
	local end=$((SECONDS + 120))
	until [[ $(usage_now) == "usage=$1 usage=$1" ]] || ((SECONDS > end)); do
		sleep 0.5
	done
	if [[ $(usage_now) == "usage=$1 usage=$1" ]]; then
		ok "$2"
	else
		not_ok "$2" "old, new: $(usage_now)"
	fi
}

wait_usage 0 "v4l2-relayd's watch, both event ids: usage=0 at once (SEND_INITIAL, nobody reads)"
"$client" /dev/video46 read 0 0 none >"$T/pv-usage.out" 2>&1 &
pvr=$!
vm_on_exit kill "$pvr"
wait_usage 1 "v4l2-relayd's watch, both event ids: usage=1 while a reader streams"
kill -TERM "$pvr"
wait "$pvr" 2>/dev/null || true
wait_usage 0 "v4l2-relayd's watch, both event ids: usage=0 once the reader stopped"
vm_term_check "relayd-client (old id) ends cleanly" "$rold" 30
vm_term_check "relayd-client (new id, under v4l2cuse-run) ends cleanly" "$rnew" 30
sed 's/^/#   /' "$R/relayd-old.txt" "$R/relayd-new.txt"
seen=$(for f in old new; do
	{ grep -oE '^usage=[0-9]+' "$R/relayd-$f.txt" || true; } | cut -d= -f2 | paste -sd ,
done | paste -sd ' ')
if [[ $seen == "0,1,0 0,1,0" ]]; then
	ok "v4l2-relayd's watch saw exactly 0, 1, 0 with either id"
else
	not_ok "v4l2-relayd's watch sees exactly 0, 1, 0 with either id" "old, new: $seen"
fi

# pyvirtualcam's writer: its probe of /dev/video0..99, then 30 I420 frames at 15 fps.
st=0
timeout 300 "$pyvcam" I420 320 240 30 15 >"$R/pyvcam-i420.txt" 2>&1 || st=$?
sed 's/^/#   /' "$R/pyvcam-i420.txt"
if ((st == 0)) && grep -q 'node=/dev/video47 format=I420 .* written=30 ' "$R/pyvcam-i420.txt" &&
	grep -q "skip /dev/video43: driver 'v4l2cuse'" "$R/pyvcam-i420.txt" &&
	grep -q "skip /dev/video45: driver 'v4l2cuse'" "$R/pyvcam-i420.txt"; then
	ok "pyvirtualcam's probe picks /dev/video47 (compat=1), passing over video43 and video45; 30 I420 frames"
else
	not_ok "pyvirtualcam's probe picks /dev/video47 and writes 30 I420 frames" "status $st"
fi
check "pyvirtualcam's I420 frames reach a read() reader (10 frames of the bars)" \
	timeout 120 "$client" /dev/video46 read 10 0 bars
ctl_rows pv >"$R/list-pv-i420.txt"
sed 's/^/#   /' "$R/list-pv-i420.txt"
check "v4l2cuse-ctl list: pyvcam-client wrote 30 I420 frames, none refused" \
	grep -qE 'writer /dev/video47: gone, pid [0-9]+ \(pyvcam-client\), 320x240/YU12, 30 written, 0 refused' \
	"$R/list-pv-i420.txt"

# Given a device, pyvirtualcam checks it the same way: not one without compat.
st=0
timeout 60 "$pyvcam" YUYV 320 240 1 15 /dev/video43 >"$R/pyvcam-nocompat.txt" 2>&1 || st=$?
sed 's/^/#   /' "$R/pyvcam-nocompat.txt"
if ((st == 1)) && grep -q "skip /dev/video43: driver 'v4l2cuse'" "$R/pyvcam-nocompat.txt"; then
	ok "pyvirtualcam refuses /dev/video43 (no compat: driver v4l2cuse)"
else
	not_ok "pyvirtualcam refuses /dev/video43 (no compat)" "status $st"
fi
st=0
timeout 300 "$pyvcam" YUYV 320 240 30 15 /dev/video47 >"$R/pyvcam-yuyv.txt" 2>&1 || st=$?
sed 's/^/#   /' "$R/pyvcam-yuyv.txt"
if ((st == 0)); then
	ok "pyvirtualcam writes 30 YUYV frames to /dev/video47"
else
	not_ok "pyvirtualcam writes 30 YUYV frames to /dev/video47" "status $st"
fi
check "pyvirtualcam's YUYV frames reach an MMAP reader under v4l2cuse-run (10 frames of the bars)" \
	timeout 120 "$run" "$client" /dev/video46 mmap 10 0 bars
ctl_rows pv >"$R/list-pv-yuyv.txt"
sed 's/^/#   /' "$R/list-pv-yuyv.txt"
check "v4l2cuse-ctl list: the newest frames are pyvcam-client's YUYV, 60 written, none refused" \
	grep -qE 'writer /dev/video47: gone, pid [0-9]+ \(pyvcam-client\), 320x240/YUYV, 60 written, 0 refused' \
	"$R/list-pv-yuyv.txt"

# --- 5. v4l2-compliance ------------------------------------------------------------------

compliance()
{
	local tag=$1 out total warnings
	shift
	out=$R/compliance-$tag.txt
	timeout 900 "$@" >"$out" 2>&1 || true
	total=$(grep -E '^Total for ' "$out" | tail -1 || true)
	diag "$tag: $total"
	# Sequence gaps: the tool stalled under TCG for more frame periods than
	# it had buffers (a loaded host), as in test-share.sh; not a fault.
	warnings=$({ grep -oE 'warn: .*' "$out" || true; } |
		grep -vE 'warn: v4l2-test-buffers.cpp\([0-9]+\): got sequence number [0-9]+, expected [0-9]+' || true)
	if grep -qE '^Total for .*Failed: 0, ' <<<"$total" && [[ -z $warnings ]]; then
		ok "v4l2-compliance $tag: $total"
	else
		not_ok "v4l2-compliance $tag has 0 failures and 0 warnings" "$total"
		grep -E 'fail:|warn:' "$out" | head -20 | sed 's/^/#   /'
	fi
}
py_checks python3 "$writer" /dev/video45 frames:3:120
compliance capture-plain v4l2-compliance -d /dev/video44 -s
compliance capture-shim "$run" v4l2-compliance -d /dev/video44 -s
compliance writer-plain v4l2-compliance -d /dev/video43 -s
compliance writer-shim "$run" v4l2-compliance -d /dev/video43 -s

# --- 6. /dev/v4l2loopback: v4l2loopback-ctl's calls (tests/vm/lbctl-client.c) ---------------

kill_writers()
{
	local p
	for p in "$@"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

# gone PATH...: every PATH disappears within 10 s.
gone()
{
	local end=$((SECONDS + 10)) p
	for p in "$@"; do
		while [[ -e $p ]]; do
			((SECONDS < end)) || return 1
			sleep 0.1
		done
	done
}

if vm_wait_node /dev/v4l2loopback 30; then
	ok "/dev/v4l2loopback exists while the daemon runs"
	check "/dev/v4l2loopback is 0600 root (v4l2loopback's misc device)" \
		bash -c '[[ $(stat -c %a:%u /dev/v4l2loopback) == 600:0 ]]'
	check "VERSION answers 0.15.0" bash -c "[[ \$('$lbctl' version) == 0.15.0 ]]"

	# ADD returns once both nodes exist: no waiting after it.
	out=$("$lbctl" add -n "Ctl Cam" -w 640 -h 480 50 2>&1) || true
	diag "add: $out"
	check "add -n 'Ctl Cam' 50 prints /dev/video50, which exists at once" \
		bash -c "[[ '$out' == /dev/video50 && -c /dev/video50 ]]"
	"$lbctl" query 50 >"$R/lbctl-query.txt" 2>&1 || true
	sed 's/^/#   /' "$R/lbctl-query.txt"
	cap=$(awk '/capture_device#/ { print $3 }' "$R/lbctl-query.txt")
	check "query 50: the label, the sizes asked for, a capture node that exists" \
		bash -c "grep -q 'card_label *: Ctl Cam\$' '$R/lbctl-query.txt' &&
			 grep -q 'max_width *: 640\$' '$R/lbctl-query.txt' &&
			 grep -q 'max_height *: 480\$' '$R/lbctl-query.txt' &&
			 [[ -n '$cap' && '$cap' != 50 && -c /dev/video$cap ]]"
	check "query by the capture node's number: the same device" \
		bash -c "'$lbctl' query '$cap' | grep -q 'output_device# *: 50\$'"
	"$lbctl" list >"$R/lbctl-list.txt" 2>&1 || true
	sed 's/^/#   /' "$R/lbctl-list.txt"
	check "list: /dev/video50, its capture node and the label" \
		grep -qP "^/dev/video50\t/dev/video$cap\tCtl Cam\$" "$R/lbctl-list.txt"
	check "v4l2cuse-ctl list shows it as v4l2loopback-0" \
		bash -c "'$ctl' list | grep -qE '^v4l2loopback-0 +video$cap'"

	# A writer on the number ADD returned; a reader on the capture node.
	ffmpeg -nostdin -loglevel error -re -f lavfi -i testsrc2=size=320x240 -pix_fmt yuyv422 \
		-t 600 -f v4l2 /dev/video50 >"$R/ffmpeg-lbctl.log" 2>&1 &
	fflb=$!
	vm_on_exit kill "$fflb"
	vm_wait_for "ffmpeg writes into /dev/video50" 300 \
		bash -c "'$ctl' list | grep -qE 'writer /dev/video50: connected, pid [0-9]+ \\(ffmpeg\\)'"
	check "a reader of /dev/video$cap gets ffmpeg's frames (testsrc2's bars)" \
		timeout 120 "$client" "/dev/video$cap" read 10 0 testsrc2
	check "delete 50 while ffmpeg writes: EBUSY" \
		bash -c "[[ \$('$lbctl' delete 50) == 'delete: EBUSY' ]]"
	kill_writers "$fflb"
	vm_wait_for "the writer's handle is closed" 30 bash -c "'$lbctl' delete 50"
	if gone /dev/video50 "/dev/video$cap"; then
		ok "delete 50: /dev/video50 and /dev/video$cap are gone"
	else
		not_ok "delete 50 removes both nodes" "$(ls -l /dev/video50 /dev/video$cap 2>&1)"
	fi

	# v4l2loopback's errors.
	check "delete 50 again: ENODEV" bash -c "[[ \$('$lbctl' delete 50) == 'delete: ENODEV' ]]"
	check "query 7 (no loopback device): ENODEV" \
		bash -c "[[ \$('$lbctl' query 7) == 'query: ENODEV' ]]"
	check "add 42 (a node in use): EEXIST" \
		bash -c "[[ \$('$lbctl' add 42) == 'add: EEXIST' ]]"
	check "add -w 9000 (wider than a writer node takes): EINVAL" \
		bash -c "[[ \$('$lbctl' add -w 9000) == 'add: EINVAL' ]]"
	check "an ioctl v4l2loopback does not have: ENOTTY" \
		bash -c "[[ \$('$lbctl' badcmd) == 'badcmd: ENOTTY' ]]"

	# 0.13/0.14's numbers, and add without options (no structure at all).
	old=$("$lbctl" --old add -n Old 2>&1) || true
	diag "add (0.13 numbers): $old"
	check "0.13/0.14 numbers: add, query, delete" \
		bash -c "[[ '$old' == /dev/video* && -c '$old' ]] &&
			 '$lbctl' --old query '$old' | grep -q 'card_label *: Old\$' &&
			 '$lbctl' --old delete '$old'"
	def=$("$lbctl" add 2>&1) || true
	diag "add without options: $def"
	check "add without options: a device with v4l2loopback's default label" \
		bash -c "[[ '$def' == /dev/video* && -c '$def' ]] &&
			 '$lbctl' query '$def' | grep -q 'card_label *: Dummy video device' &&
			 '$lbctl' delete '$def'"

	# v4l2loopback-ctl itself, where it is installed.
	if command -v v4l2loopback-ctl >/dev/null; then
		real=$(v4l2loopback-ctl add -n Real 2>&1) || true
		diag "v4l2loopback-ctl add: $real"
		check "v4l2loopback-ctl add and delete" \
			bash -c "[[ '$real' == /dev/video* && -c '$real' ]] &&
				 v4l2loopback-ctl delete '$real'"
	else
		diag "no v4l2loopback-ctl here: lbctl-client stands in for it"
	fi
else
	not_ok "/dev/v4l2loopback exists while the daemon runs" "$(tail -5 "$R/daemon.log")"
fi
