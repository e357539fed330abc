#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The uvc, file and gst: sources against real clients, without the shim:
#  - uvc:/dev/videoN over vivid (webcam input, 320x180): frames equal to
#    vivid's own, a converted format (MJPG) close to vivid's RGB, controls
#    forwarded (set while the camera is closed, applied when a reader opens
#    it), v4l2-compliance -s with 0 failures, and an unplug (the vivid
#    platform device unbound, then rmmod vivid) -> "NO SIGNAL" placeholder
#    frames at the negotiated format -> modprobe vivid -> the camera again,
#    for a reader that never sees an error, with the controls set through
#    our node applied again to the new camera;
#  - file sources playing a generated Y4M (every frame once, in order) and
#    an MP4 made from it by ffmpeg, decoded by GStreamer (in order);
#  - gst: live pipelines: a raw one (scaled) and one ending in JPEG
#    (decoded) give their pixels after the NO SIGNAL card; a description
#    that does not parse is a one-line startup error.
# Process starts are slow under TCG: the checks are batched into few
# python/v4l2-ctl runs.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl v4l2-compliance python3 ffmpeg || bail_out "missing programs"

T=$(mktemp -d)
W=320
H=180

vm_modprobe cuse
vm_wait_node /dev/cuse 10
# GStreamer scans its plugins into a registry on first use (slow under TCG):
# let that happen now, beside the uvc checks, not when the MP4 daemon starts.
gst-inspect-1.0 uridecodebin >/dev/null 2>&1 &

# start_daemon NAME SPEC ARGS...: a daemon serving /dev/NAME, its pid in
# $started_pid (not printed: in a $(...) subshell its clean-up and bail-out
# would be lost).
start_daemon()
{
	local name=$1 spec=$2
	shift 2
	"$daemon" --device "$name" --source "$spec" "$@" >>"$R/daemon-$name.log" 2>&1 &
	local pid=$!
	vm_on_exit kill "$pid"
	vm_wait_node "/dev/$name" 90 || bail_out "/dev/$name did not appear: $(tail -5 "$R/daemon-$name.log")"
	started_pid=$pid
}

load_vivid()
{
	cam=$(vm_load_vivid)
}

# wait_log KIND N [TIMEOUT_S]: until the unplug reader logged N frames of KIND.
wait_log()
{
	local kind=$1 want=$2 timeout=${3:-60} i n
	for ((i = 0; i < timeout * 10; i++)); do
		n=$(grep -c " $kind\$" "$R/unplug.log" 2>/dev/null) || n=0
		((n >= want)) && return 0
		sleep 0.1
	done
	return 1
}

load_vivid || bail_out "vivid did not come up"
diag "vivid capture node: $cam"
# No OSD text (it changes every frame): frames of both nodes compare equal.
v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 --list-ctrls >"$R/vivid-ctrls.txt" 2>&1

# --- uvc: what it offers, and its frames ----------------------------------------

start_daemon video42 "uvc:$cam" --size ${W}x$H --format YUYV
uvc_pid=$started_pid
diag "t=${SECONDS}s: uvc content"
v4l2-ctl -d /dev/video42 --list-formats-ext --list-ctrls >"$R/offer.txt" 2>&1 || true
check "the uvc device lists vivid's sizes, a converted MJPG and vivid's brightness" bash -c \
	"grep -q 'Size: Discrete 1280x720' $R/offer.txt && grep -q \"'MJPG'\" $R/offer.txt && grep -q brightness $R/offer.txt"
check "vivid: YUYV frames captured directly" \
	v4l2-ctl -d "$cam" --set-fmt-video=width=$W,height=$H,pixelformat=YUYV \
	--stream-mmap --stream-count=2 --stream-to="$R/vivid.yuyv"
check "vivid: RGB3 frames captured directly" \
	v4l2-ctl -d "$cam" --set-fmt-video=width=$W,height=$H,pixelformat=RGB3 \
	--stream-mmap --stream-count=2 --stream-to="$R/vivid.rgb"

py_checks python3 - /dev/video42 $W $H "$R" "$T" <<'PY'
import fcntl, os, struct, subprocess, sys
dev, w, h, res, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
VIDIOC_S_FMT = 0xc0d05605
def fourcc(s):
    return struct.unpack("<I", s.encode())[0]
def s_fmt(fd, fmt):
    buf = bytearray(208)
    struct.pack_into("<I4xIII", buf, 0, 1, w, h, fourcc(fmt))
    fcntl.ioctl(fd, VIDIOC_S_FMT, buf)
    return struct.unpack_from("<IIIIIII", buf, 8)
def frames(fd, size, n):
    out = []
    for i in range(n):
        b = os.read(fd, size)
        if len(b) != size:
            raise SystemExit(f"FAIL read() returned {len(b)} bytes, expected {size}")
        out.append(b)
    return out
def check(cond, text):
    print(("PASS " if cond else "FAIL ") + text)

fd = os.open(dev, os.O_RDWR)
# YUYV: the camera's format, passed through.
size = w * h * 2
ours = frames(fd, size, 3)[-1]
theirs = open(f"{res}/vivid.yuyv", "rb").read()[-size:]
diff = 0 if ours == theirs else sum(map(int.__ne__, ours, theirs))
check(diff <= size // 1000, f"uvc node YUYV frames equal vivid's ({diff} of {size} bytes differ)")
os.close(fd)	# read() keeps the queue (and the format) until the handle goes

# MJPG: not a vivid format; converted from its YUYV (libyuv + libjpeg).
fd = os.open(dev, os.O_RDWR)
pix = s_fmt(fd, "MJPG")
size = pix[5]
check(pix[2] == fourcc("MJPG") and size >= w * h * 2, f"S_FMT MJPG {w}x{h} (sizeimage {size})")
jpeg = frames(fd, size, 2)[-1]
end = jpeg.rfind(b"\xff\xd9")
check(jpeg[:2] == b"\xff\xd8" and end > 0, f"an MJPG frame is a JPEG ({end + 2} bytes, padded)")
open(f"{tmp}/f.jpg", "wb").write(jpeg[:end + 2])
subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", f"{tmp}/f.jpg", "-f", "rawvideo",
                "-pix_fmt", "rgb24", f"{tmp}/f.rgb"], check=True)
a = open(f"{tmp}/f.rgb", "rb").read()
b = open(f"{res}/vivid.rgb", "rb").read()[-w * h * 3:]
mad = sum(map(abs, map(int.__sub__, a, b))) / len(b) if len(a) == len(b) else 999
check(mad < 8, f"the MJPG frame decodes close to vivid's RGB3 (mean |difference| {mad:.2f})")
os.close(fd)
fd = os.open(dev, os.O_RDWR)
s_fmt(fd, "YUYV")
os.close(fd)
PY

# --- uvc: controls -----------------------------------------------------------

diag "t=${SECONDS}s: uvc controls"
# Nobody streams: the camera is closed (on demand, docs/sources.md) and the
# sets are remembered; the next consumer's start applies them to it.
check "set brightness=200, contrast=100 through the uvc node" \
	v4l2-ctl -d /dev/video42 --set-ctrl brightness=200,contrast=100
v4l2-ctl -d /dev/video42 --get-ctrl brightness,contrast >"$R/ctrl-uvc.txt" 2>&1 || true
check "a reader streams two frames (the camera opened for it)" \
	timeout 60 dd if=/dev/video42 of=/dev/null bs=$((320 * 180 * 2)) count=2
v4l2-ctl -d "$cam" --get-ctrl brightness,contrast >"$R/ctrl-vivid.txt" 2>&1 || true
check "vivid reads them back (forwarded at the open)" bash -c \
	"grep -qx 'brightness: 200' $R/ctrl-vivid.txt && grep -qx 'contrast: 100' $R/ctrl-vivid.txt"
check "the uvc node reads them back" bash -c \
	"grep -qx 'brightness: 200' $R/ctrl-uvc.txt && grep -qx 'contrast: 100' $R/ctrl-uvc.txt"
sleep 1
ls -l "/proc/$uvc_pid/fd" >"$R/daemon-fds-idle.txt" 2>&1 || true
check "idle again: the daemon holds no fd of the camera ($cam)" bash -c \
	"grep -q ' -> /dev/' '$R/daemon-fds-idle.txt' && ! grep -q ' -> $cam\$' '$R/daemon-fds-idle.txt'"

# --- uvc: v4l2-compliance ----------------------------------------------------

diag "t=${SECONDS}s: v4l2-compliance"
out=$R/compliance-uvc.txt
timeout 600 v4l2-compliance -d /dev/video42 -s >"$out" 2>&1 || true
total=$(grep -E '^Total for ' "$out" | tail -1)
if grep -qE 'Failed: 0,' <<<"$total"; then
	ok "v4l2-compliance -s on the uvc node: $total"
else
	not_ok "v4l2-compliance -s on the uvc node has 0 failures" "$total"
	grep -E 'fail:' "$out" | head -30 | sed 's/^/#   /'
fi
grep -E 'warn:' "$out" | head -10 | sed 's/^/#   /' || true

# --- uvc: unplug and replug ----------------------------------------------------

diag "t=${SECONDS}s: unplug"
# Picture controls about neutral again (compliance changed some). The new
# vivid starts at brightness 128: the daemon must set its 140 again.
v4l2-ctl -d /dev/video42 --set-ctrl brightness=140,contrast=128,saturation=128,hue=0 || true

# The reader classifies every frame: "card" (the placeholder: its bottom row
# is the card's background, Y' 43, Cb/Cr 128) or "camera".
python3 - /dev/video42 $W $H "$R/unplug.log" "$T/stop" <<'PY' &
import os, sys, time
dev, w, h, log, stop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
size = w * h * 2
fd = os.open(dev, os.O_RDWR)
t0 = time.monotonic()
with open(log, "w") as f:
    while not os.path.exists(stop) and time.monotonic() - t0 < 900:
        buf = os.read(fd, size)
        if len(buf) != size:
            f.write(f"ERROR short read {len(buf)}\n")
            break
        row = buf[(h - 1) * w * 2:]
        card = max(row[0::2]) <= 45 and min(row[0::2]) >= 41 and \
               max(row[1::2]) <= 130 and min(row[1::2]) >= 126
        f.write(f"{time.monotonic() - t0:.2f} {'card' if card else 'camera'}\n")
        f.flush()
os.close(fd)
PY
reader=$!
wait_log camera 15 120 || not_ok "the reader gets camera frames"
# Unplugged: the platform device goes away (its node too), like a USB camera.
check "unbind vivid (unplug)" bash -c 'echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind'
if wait_log card 15 60; then ok "placeholder frames while the camera is gone"; else not_ok "placeholder frames while the camera is gone"; fi
# The daemon closed the camera, so the module unloads.
unloaded=false
end=$((SECONDS + 120))
while ((SECONDS < end)); do
	if /sbin/rmmod vivid 2>/dev/null; then
		unloaded=true
		break
	fi
	sleep 0.2
done
if $unloaded; then ok "rmmod vivid (the daemon let go of the camera)"; else not_ok "rmmod vivid"; fi
check "modprobe vivid again" load_vivid
# Measured 6-20 s from unplug to camera frames (docs/reliability.md):
# a wall-time limit far above, for a daemon that never gets it back.
end=$((SECONDS + 300))
while ((SECONDS < end)); do
	n=$(awk '$2 == "card" { gone = 1 } gone && $2 == "camera" { n++ } END { print n + 0 }' "$R/unplug.log")
	((n >= 15)) && break
	sleep 0.1
done
if ((n >= 15)); then ok "camera frames again"; else not_ok "camera frames again" "$n after the placeholder"; fi
touch "$T/stop"
wait "$reader" || true
check "the reader saw camera, placeholder, camera frames, and no error" python3 - "$R/unplug.log" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
if any(l[0] == "ERROR" for l in lines):
    sys.exit("a read failed")
runs = []
for k in (l[1] for l in lines):
    if not runs or runs[-1][0] != k:
        runs.append([k, 0])
    runs[-1][1] += 1
print("runs:", " ".join(f"{k}x{n}" for k, n in runs), "over", lines[-1][0], "s")
ok = [k for k, _ in runs] == ["camera", "card", "camera"] and min(n for _, n in runs) >= 10
sys.exit(0 if ok else 1)
PY
v4l2-ctl -d "$cam" --get-ctrl brightness >"$R/ctrl-replug.txt" 2>&1 || true
check "the new vivid got brightness 140 from the daemon" grep -qx 'brightness: 140' "$R/ctrl-replug.txt"
check "the daemon logged the loss and the return" bash -c \
	"grep -q 'is gone' $R/daemon-video42.log && grep -q 'is back' $R/daemon-video42.log"
check "daemon still alive after the unplug cycle" kill -0 "$uvc_pid"

# --- file sources ------------------------------------------------------------

diag "t=${SECONDS}s: file sources"
# 30 frames of 320x240 4:2:0: frame i has flat Y' 16 + 7 i.
python3 - "$T/clip.y4m" <<'PY'
import sys
w, h = 320, 240
with open(sys.argv[1], "wb") as f:
    f.write(b"YUV4MPEG2 W320 H240 F30:1 Ip A1:1 C420jpeg\n")
    for i in range(30):
        f.write(b"FRAME\n" + bytes([16 + 7 * i]) * (w * h) + bytes([128]) * (w * h // 2))
PY
check "ffmpeg makes an MP4 (MJPEG) of the Y4M" \
	ffmpeg -v error -y -i "$T/clip.y4m" -c:v mjpeg -q:v 2 -f mp4 "$T/clip.mp4"
start_daemon video43 "file:$T/clip.y4m" --size 320x240 --format YUYV --fps 30
start_daemon video44 "file:$T/clip.mp4" --size 320x240 --format YUYV --fps 30

# The luma of a frame maps back to its index (exact for the Y4M; by min/max
# for the MP4, whose range a decoder may re-map). The Y4M: 45 frames, each
# file frame once, in order. The MP4: a frame GStreamer has not decoded in
# time shows the previous one again (file.c, Pacing), as often as the
# machine is slow, so it is read until every frame was seen (at least 45,
# at most 600) and checked for order, not for repeats.
py_checks python3 - <<'PY'
import os
w, h, n = 320, 240, 45
size = w * h * 2
def order(dev, exact, what):
    fd = os.open(dev, os.O_RDWR)
    ys = []
    while len(ys) < n or (not exact and len(set(ys)) < 30 and len(ys) < 600):
        b = os.read(fd, size)
        if len(b) != size:
            print(f"FAIL {what}: read() returned {len(b)} bytes")
            return
        ys.append(b[(h // 2 * w + w // 2) * 2])
    os.close(fd)
    if exact:
        idx = [(y - 16) / 7 for y in ys]
        if any(i != int(i) for i in idx):
            print(f"FAIL {what}: luma not of a frame: {ys}")
            return
    else:
        lo, hi = min(ys), max(ys)
        idx = [round((y - lo) / (hi - lo) * 29) for y in ys]
    idx = [int(i) for i in idx]
    print("frames:", " ".join(map(str, idx)))
    steps = [(b - a) % 30 for a, b in zip(idx, idx[1:])]
    if exact:
        good = all(s == 1 for s in steps)
        what += ": every frame once, in order, looping"
    else:
        good = all(s in (0, 1) for s in steps) and len(set(idx)) == 30
        what += f": every frame, in order, looping ({len(idx)} read, {steps.count(0)} repeats)"
    print(("PASS " if good else "FAIL ") + what)
order("/dev/video43", True, "file source (Y4M)")
order("/dev/video44", False, "file source (MP4 via GStreamer)")
PY

# A missing file is a one-line startup error naming it.
rc=0
out=$(timeout 60 "$daemon" --device video45 --source "file:$T/nope.y4m" 2>&1 >/dev/null) || rc=$?
if ((rc != 0 && rc != 124)) && grep -q "'$T/nope.y4m': No such file" <<<"$out"; then
	ok "missing file: exit $rc, $(wc -l <<<"$out") line(s): $out"
else
	not_ok "a missing file is a one-line startup error naming it" "exit $rc: $out"
fi
# --- gst: live pipelines (docs/sources.md) ---------------------------------
# A raw pipeline (white at 160x120, served at 320x240: scaled) and one that
# ends in JPEG (black, decoded): until the pipeline's first frame the
# reader gets the NO SIGNAL card, then the stream's frames. A description
# that does not parse is a one-line startup error with GStreamer's message.
diag "t=${SECONDS}s: gst: live source"
start_daemon video46 "gst:videotestsrc pattern=white ! video/x-raw,width=160,height=120" \
	--size 320x240 --format YUYV --fps 15
start_daemon video47 "gst:videotestsrc pattern=black ! video/x-raw,width=320,height=240 ! jpegenc" \
	--size 320x240 --format YUYV --fps 15
py_checks python3 - <<'PY'
import os, time

def uniform(dev, want, what, w=320, h=240, limit=120):
    # read() takes a whole frame per call (the CUSE layer splits it).
    fd = os.open(dev, os.O_RDONLY)
    end, n, last = time.time() + limit, 0, None
    while time.time() < end:
        b = os.read(fd, w * h * 2)
        n += 1
        if len(b) != w * h * 2:
            print(f"FAIL {what}: read() gave {len(b)} bytes")
            return
        # The NO SIGNAL card comes first: look on until a frame is the stream's.
        last = sum(abs(y - want) > 3 for y in b[0::2]) + sum(abs(c - 128) > 4 for c in b[1::2])
        if last == 0:
            print(f"PASS {what}: frame {n} is uniform Y' {want}, neutral chroma")
            os.close(fd)
            return
    print(f"FAIL {what}: no uniform frame of Y' {want} in {n} frames "
          f"(the last had {last} samples off)")

uniform("/dev/video46", 235, "gst: raw pipeline (white, 160x120 scaled to 320x240)")
# jpegenc puts videotestsrc's limited-range samples into the JPEG as they
# are, and a JPEG is full range (JFIF): its black, Y' 16 read as full
# range, is 16 + 16 * 219 / 255 = 30 in limited range.
uniform("/dev/video47", 30, "gst: pipeline ending in JPEG (black as jpegenc writes it, decoded)")
PY
rc=0
out=$(timeout 60 "$daemon" --device video48 --source "gst:videotestsrc ! nosuchelement" 2>&1 >/dev/null) || rc=$?
if ((rc != 0 && rc != 124)) && [[ $(wc -l <<<"$out") == 1 ]] && grep -q 'nosuchelement' <<<"$out"; then
	ok "a gst: description that does not parse: exit $rc, one line: $out"
else
	not_ok "a gst: description that does not parse is a one-line startup error" "exit $rc: $out"
fi

diag "t=${SECONDS}s: done"
