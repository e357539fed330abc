#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A capture device that is not a webcam behind uvc: vivid switched to its TV
# input (PAL, 720x576, interlaced), no --size/--format given:
#  - the node starts at the camera's current format; a consumer asking for
#    FIELD_NONE gets progressive frames equal to vivid's own (the fields of
#    an INTERLACED buffer already alternate line by line), never the NO
#    SIGNAL card; one asking for FIELD_INTERLACED gets it; ALTERNATE (one
#    field per buffer) cannot be read(): EINVAL, as vb2 drivers answer;
#  - a refused configuration (another application streams from vivid): the
#    consumer's read() fails with EBUSY, one log line, and the next consumer
#    streams real frames;
#  - the camera unplugged (unbound) and bound again, back on its webcam input
#    where the interlaced configuration a consumer streams no longer exists:
#    the consumer's read() fails with EIO (not NO SIGNAL for ever); after
#    vivid is switched to TV again a new consumer streams real frames;
#  - controls: every writable control of a standard class (user, DV) appears
#    on our node with its class control; changes made directly on vivid
#    (a value; autogain off makes gain active: a flags change) arrive as
#    V4L2_EVENT_CTRL on our node;
#  - the S-Video input (interlaced as well): FIELD_INTERLACED and woven
#    frames equal vivid's;
#  - v4l2-compliance -s on our node with the TV input;
#  - vivid reloaded multi-planar (multiplanar=2): its NV12M offered as NV12
#    on our single-planar node, frames equal to vivid's planes joined; unbound
#    and bound again while a reader streams: placeholder, then camera frames,
#    no read error; v4l2-compliance -s on that node.
# vivid has no camera-class controls: that class is covered by the same code
# path as DV (every standard class is forwarded).
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl v4l2-compliance python3 || bail_out "missing programs"

node=/dev/video42

vm_modprobe cuse
vm_wait_node /dev/cuse 10

cam=$(vm_load_vivid) || bail_out "vivid did not come up"
diag "vivid capture node: $cam"

# tv_input: vivid on its TV input (1), no OSD text (it changes every frame).
tv_input()
{
	v4l2-ctl -d "$cam" -i 1 >/dev/null &&
		v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null
}

# ref NAME: two frames of vivid at its current format, straight from vivid.
ref()
{
	v4l2-ctl -d "$cam" --stream-mmap --stream-count=2 --stream-to="$R/$1.yuyv"
}

check "vivid on its TV input" tv_input
v4l2-ctl -d "$cam" --get-fmt-video >"$R/vivid-fmt.txt" 2>&1 || true
read -r W H <<<"$(sed -n 's|.*Width/Height *: *\([0-9]*\)/\([0-9]*\).*|\1 \2|p' "$R/vivid-fmt.txt")"
[[ -n $W && -n $H ]] || bail_out "vivid's format: $(cat "$R/vivid-fmt.txt")"
diag "vivid TV format: ${W}x$H, $(grep -i 'field' "$R/vivid-fmt.txt" | head -1)"
check "vivid's TV input is interlaced" grep -qi 'Field *: *Interlaced' "$R/vivid-fmt.txt"
check "vivid: TV frames captured directly" ref tv1

# keep_open=1: the camera stays open while nobody streams, as a passed-through
# capture card whose input is switched on the card itself (the S-Video part)
# and whose control events are watched while idle (the events part) needs;
# the camera opened on demand is tested in test-sources.sh.
"$daemon" --device video42 --source "uvc:$cam,keep_open=1" >>"$R/daemon.log" 2>&1 &
pid=$!
vm_on_exit kill "$pid"
vm_wait_node $node 90 || bail_out "$node did not appear: $(tail -5 "$R/daemon.log")"

# Shared by the python checks: formats, frames, the placeholder card.
cat >"/tmp/pt.py" <<'PY'
import errno, fcntl, os, select, struct, sys, time
VIDIOC_G_FMT = 0xc0d05604
VIDIOC_S_FMT = 0xc0d05605
NONE, INTERLACED, ALTERNATE = 1, 4, 7
def check(cond, text):
    print(("PASS " if cond else "FAIL ") + text, flush=True)
def g_fmt(fd):
    buf = bytearray(208)
    struct.pack_into("<I", buf, 0, 1)
    fcntl.ioctl(fd, VIDIOC_G_FMT, buf)
    return struct.unpack_from("<IIIIIII", buf, 8)	# w h fourcc field bpl size cs
def s_fmt(fd, w, h, field):
    buf = bytearray(208)
    struct.pack_into("<I4xIIII", buf, 0, 1, w, h, 0x56595559, field)	# YUYV
    fcntl.ioctl(fd, VIDIOC_S_FMT, buf)
    return struct.unpack_from("<IIIIIII", buf, 8)
def frame(fd, size):
    # A CUSE read is at most 128 KiB: a frame takes several (vb2's read()
    # goes on where the last one stopped).
    b = b""
    while len(b) < size:
        chunk = os.read(fd, size - len(b))
        if not chunk:
            break
        b += chunk
    return b
def card(frame, w, h):
    # The NO SIGNAL card: its bottom row is the background (Y' 43, Cb/Cr 128).
    row = frame[(h - 1) * w * 2:h * w * 2]
    return max(row[0::2]) <= 45 and min(row[0::2]) >= 41 and \
           max(row[1::2]) <= 130 and min(row[1::2]) >= 126
def differ(a, b):
    return 0 if a == b else sum(map(int.__ne__, a, b))
def same_as(ref, f, what):
    size = len(f)
    theirs = open(ref, "rb").read()[-size:]
    d = differ(f, theirs)
    check(size == W * H * 2 and d <= size // 1000 and not card(f, W, H),
          f"{what}: frames equal vivid's ({d} of {size} bytes differ)")
def same_on_open(dev, ref, what, field=None):
    # A new handle (its format set first when @field is given): its third frame is @ref's.
    fd = os.open(dev, os.O_RDWR)
    if field is not None:
        s_fmt(fd, W, H, field)
    frames = [frame(fd, W * H * 2) for _ in range(3)]
    same_as(ref, frames[-1], what)
    os.close(fd)
W, H = int(os.environ["W"]), int(os.environ["H"])
PY
export W H

# wait_log LOG KIND N TIMEOUT_S [AFTER]: until the reader's LOG has N lines of
# KIND ("camera", "card", "ERROR"), counting only those after the first
# "card" line when AFTER is 1; wall time (a process start costs seconds
# under TCG).
wait_log()
{
	local log=$1 kind=$2 want=$3 end=$((SECONDS + $4)) after=${5:-0} n
	while ((SECONDS < end)); do
		n=$(awk -v k="$kind" -v after="$after" '
			$1 == "ERROR" && k == "ERROR" { n++ }
			$2 == "card" { gone = 1 }
			$2 == k && (!after || gone) { n++ }
			END { print n + 0 }' "$log" 2>/dev/null) || n=0
		((n >= want)) && return 0
		sleep 0.5
	done
	return 1
}

# unplug_replug LOG READER CAMERA: with READER (pid $reader, stopped at exit)
# logging to LOG: it gets camera frames, vivid is unbound (READER gets the
# placeholder) and bound again.
unplug_replug()
{
	vm_on_exit kill "$reader"
	wait_log "$1" camera 5 120 || not_ok "$2 gets camera frames"
	check "unbind $3 (unplug)" bash -c 'echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind'
	if wait_log "$1" card 5 60; then ok "$2 gets placeholder frames while $3 is gone"; else not_ok "$2 gets placeholder frames while $3 is gone"; fi
	check "bind $3 again" bash -c 'echo vivid.0 >/sys/bus/platform/drivers/vivid/bind'
}

# --- the TV input: format, frames, fields -------------------------------------

diag "t=${SECONDS}s: TV input frames"
py_checks python3 - "$node" "$R" <<'PY'
exec(open("/tmp/pt.py").read())
dev, res = sys.argv[1], sys.argv[2]
size = W * H * 2
fd = os.open(dev, os.O_RDWR)
w, h, fourcc, field, bpl, sizeimage, cs = g_fmt(fd)
check((w, h, fourcc) == (W, H, 0x56595559),
      f"the node starts at the camera's current format ({w}x{h} {struct.pack('<I', fourcc)})")
check(field == NONE, f"by default a progressive frame (field {field})")
frames = [frame(fd, size) for _ in range(3)]
check(all(len(f) == size for f in frames), f"read() returns whole frames of {size} bytes")
same_as(f"{res}/tv1.yuyv", frames[-1], "FIELD_NONE (woven)")
os.close(fd)

fd = os.open(dev, os.O_RDWR)
got = s_fmt(fd, W, H, INTERLACED)
check(got[3] == INTERLACED and g_fmt(fd)[3] == INTERLACED,
      f"S_FMT FIELD_INTERLACED is kept (field {got[3]})")
frames = [frame(fd, size) for _ in range(2)]
same_as(f"{res}/tv1.yuyv", frames[-1], "FIELD_INTERLACED")
os.close(fd)

fd = os.open(dev, os.O_RDWR)
got = s_fmt(fd, W, H // 2, ALTERNATE)	# V4L2: the height of one field
print(f"S_FMT ALTERNATE: {got[0]}x{got[1]} field {got[3]}")
if got[3] == ALTERNATE:
    try:
        os.read(fd, got[5])
        check(False, "read() of FIELD_ALTERNATE fails with EINVAL")
    except OSError as e:
        check(e.errno == errno.EINVAL, f"read() of FIELD_ALTERNATE fails with EINVAL ({e.strerror})")
else:
    check(False, f"S_FMT FIELD_ALTERNATE is kept (field {got[3]})")
s_fmt(fd, W, H, NONE)
os.close(fd)
PY

# --- a refused configuration: the camera is busy ------------------------------

diag "t=${SECONDS}s: refused (busy)"
v4l2-ctl -d "$cam" --stream-mmap --stream-count=1000000 >/dev/null 2>&1 &
busy=$!
vm_on_exit kill "$busy"
sleep 5
py_checks python3 - "$node" <<'PY'
exec(open("/tmp/pt.py").read())
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.read(fd, W * H * 2)
    check(False, "read() fails while another application streams from the camera")
except OSError as e:
    check(e.errno == errno.EBUSY, f"read() fails with the camera's error: {e.strerror}")
os.close(fd)
PY
check "one log line names what the camera answered" grep -q "refuses the stream" "$R/daemon.log"
kill "$busy" 2>/dev/null || true
wait "$busy" 2>/dev/null || true
py_checks python3 - "$node" "$R" <<'PY'
exec(open("/tmp/pt.py").read())
same_on_open(sys.argv[1], f"{sys.argv[2]}/tv1.yuyv", "after the camera is free again")
PY
check "daemon alive" kill -0 "$pid"

# --- unplugged, back on another input: refused, not NO SIGNAL for ever --------

diag "t=${SECONDS}s: unplug, replug on the webcam input"
# The reader streams FIELD_INTERLACED (only the TV input has it) and logs
# "camera", "card" (the placeholder) or "ERROR errno" per frame.
python3 - "$node" "$R/unplug.log" <<'PY' &
exec(open("/tmp/pt.py").read())
dev, log = sys.argv[1], sys.argv[2]
fd = os.open(dev, os.O_RDWR)
s_fmt(fd, W, H, INTERLACED)
t0 = time.monotonic()
with open(log, "w") as f:
    while time.monotonic() - t0 < 600:
        try:
            b = frame(fd, W * H * 2)
        except OSError as e:
            f.write(f"ERROR {errno.errorcode.get(e.errno, e.errno)}\n")
            break
        f.write(f"{time.monotonic() - t0:.2f} {'card' if card(b, W, H) else 'camera'}\n")
        f.flush()
PY
reader=$!
unplug_replug "$R/unplug.log" "the reader" "vivid"
end=$((SECONDS + 60))
while ((SECONDS < end)) && ! cam2=$(vm_find_video 'vivid-000-vid-cap'); do sleep 0.2; done
check "vivid's node is back at $cam" test "${cam2:-}" = "$cam"
if wait_log "$R/unplug.log" ERROR 1 300; then
	ok "the reader's read() fails: $(grep '^ERROR' "$R/unplug.log")"
else
	not_ok "the reader's read() fails once the camera is back on another input" "$(tail -3 "$R/unplug.log")"
fi
check "the error is EIO" grep -qx 'ERROR EIO' "$R/unplug.log"
check "one log line: back but refuses" grep -q "is back but refuses the stream" "$R/daemon.log"
wait "$reader" 2>/dev/null || true
check "vivid on its TV input again" tv_input
check "vivid: TV frames captured directly" ref tv2
py_checks python3 - "$node" "$R" <<'PY'
exec(open("/tmp/pt.py").read())
same_on_open(sys.argv[1], f"{sys.argv[2]}/tv2.yuyv", "a new consumer after the replug",
             INTERLACED)
PY

# --- controls: every standard class, events from changes on the camera --------

diag "t=${SECONDS}s: controls"
py_checks python3 - "$node" "$cam" <<'PY'
exec(open("/tmp/pt.py").read())
import subprocess
VIDIOC_QUERY_EXT_CTRL = 0xc0e85667
VIDIOC_SUBSCRIBE_EVENT = 0x4020565a
VIDIOC_DQEVENT = 0x80885659
NEXT = 0x80000000
FORWARDED_TYPES = {1, 2, 3, 4, 5, 8, 9}	# int, bool, menu, button, int64, bitmask, int menu
def ctrls(dev):
    fd = os.open(dev, os.O_RDWR)
    out, cid = {}, 0
    while True:
        buf = bytearray(232)
        struct.pack_into("<I", buf, 0, cid | NEXT)
        try:
            fcntl.ioctl(fd, VIDIOC_QUERY_EXT_CTRL, buf)
        except OSError:
            break
        cid, typ = struct.unpack_from("<II", buf, 0)
        name = bytes(buf[8:40]).split(b"\0")[0].decode()
        flags, dims = struct.unpack_from("<I", buf, 72)[0], struct.unpack_from("<I", buf, 84)[0]
        out[cid] = (typ, name, flags, dims)
    os.close(fd)
    return out
ours, theirs = ctrls(sys.argv[1]), ctrls(sys.argv[2])
want = {c for c, (t, n, f, d) in theirs.items()
        if (c >> 16) != 0xf0 and t in FORWARDED_TYPES and not f & 0x4 and d == 0}
want |= {(c & 0x0fff0000) | 1 for c in want}
missing = sorted(want - set(ours))
extra = sorted(set(ours) - want)
print("ours:", ", ".join(f"{c:#x} {ours[c][1]}" for c in sorted(ours)))
check(not missing and not extra,
      f"our controls are vivid's writable standard-class ones plus class controls "
      f"({len(ours)}; missing {[hex(c) for c in missing]}, extra {[hex(c) for c in extra]})")
check(0x00a00001 in ours and ours[0x00a00001][1] == "Digital Video Controls",
      "a second class (Digital Video) with its class control")

# Events: subscribed on our node, the change made on vivid directly.
BRIGHTNESS, AUTOGAIN, GAIN = 0x00980900, 0x00980912, 0x00980913
fd = os.open(sys.argv[1], os.O_RDWR)
for cid in (BRIGHTNESS, GAIN):
    fcntl.ioctl(fd, VIDIOC_SUBSCRIBE_EVENT, struct.pack("<III20x", 3, cid, 0))
def events(timeout):
    got, end = [], time.monotonic() + timeout
    p = select.poll()
    p.register(fd, select.POLLPRI)
    while time.monotonic() < end:
        if not p.poll(1000):
            continue
        buf = bytearray(136)
        fcntl.ioctl(fd, VIDIOC_DQEVENT, buf)
        typ, = struct.unpack_from("<I", buf, 0)
        changes, ctype, value = struct.unpack_from("<IIq", buf, 8)
        flags, = struct.unpack_from("<I", buf, 24)
        cid, = struct.unpack_from("<I", buf, 96)
        got.append((typ, cid, changes, value, flags))
        if len(got) >= 1:
            end = min(end, time.monotonic() + 2)
    return got
# vivid moves brightness's range with the input (TV: 128..383): a value inside it.
theirs_q = bytearray(232)
struct.pack_into("<I", theirs_q, 0, BRIGHTNESS)
vfd = os.open(sys.argv[2], os.O_RDWR)
fcntl.ioctl(vfd, VIDIOC_QUERY_EXT_CTRL, theirs_q)
os.close(vfd)
target = struct.unpack_from("<q", theirs_q, 40)[0] + 50
subprocess.run(["v4l2-ctl", "-d", sys.argv[2], "--set-ctrl", f"brightness={target}"], check=True)
ev = events(60)
print("events:", ev)
check(any(t == 3 and c == BRIGHTNESS and ch & 1 and v == target for t, c, ch, v, f in ev),
      f"brightness set to {target} on vivid: V4L2_EVENT_CTRL with the new value on our node")
ctl = bytearray(struct.pack("<Ii", BRIGHTNESS, 0))
fcntl.ioctl(fd, 0xc008561b, ctl)	# VIDIOC_G_CTRL
check(struct.unpack_from("<i", ctl, 4)[0] == target,
      f"our node reads it back ({struct.unpack_from('<i', ctl, 4)[0]})")
subprocess.run(["v4l2-ctl", "-d", sys.argv[2], "--set-ctrl", "gain_automatic=1"], check=True)
events(10)
subprocess.run(["v4l2-ctl", "-d", sys.argv[2], "--set-ctrl", "gain_automatic=0"], check=True)
ev = events(60)
print("events:", ev)
check(any(t == 3 and c == GAIN and ch & 2 and not f & 0x10 for t, c, ch, v, f in ev),
      "autogain off on vivid: gain's flags change (active) arrives as an event")
os.close(fd)
PY

# --- the S-Video input (vivid input 2): interlaced too ---------------------------

diag "t=${SECONDS}s: S-Video input"
check "vivid on its S-Video input" v4l2-ctl -d "$cam" -i 2
check "vivid: S-Video frames captured directly" ref svideo
py_checks python3 - "$node" "$R" <<'PY'
exec(open("/tmp/pt.py").read())
same_on_open(sys.argv[1], f"{sys.argv[2]}/svideo.yuyv", "S-Video, FIELD_INTERLACED", INTERLACED)
same_on_open(sys.argv[1], f"{sys.argv[2]}/svideo.yuyv", "S-Video, FIELD_NONE (woven)", NONE)
PY
check "vivid back on its TV input" tv_input

# --- v4l2-compliance on the TV input ------------------------------------------

diag "t=${SECONDS}s: v4l2-compliance"
vm_compliance "v4l2-compliance -s with the TV input" "$R/compliance.txt" 900 \
	v4l2-compliance -d $node -s
check "daemon alive at the end" kill -0 "$pid"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# --- a multi-planar camera: NV12M offered as NV12, unplugged and back ---------

diag "t=${SECONDS}s: multi-planar"
/sbin/rmmod vivid || bail_out "rmmod vivid"
vm_modprobe vivid n_devs=1 node_types=0x1 multiplanar=2 || bail_out "vivid multiplanar=2"
end=$((SECONDS + 20))
while ((SECONDS < end)) && ! cam=$(vm_find_video 'vivid-000-vid-cap'); do sleep 0.2; done
v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true
check "vivid multi-planar: NV12M frames captured directly" \
	v4l2-ctl -d "$cam" --set-fmt-video=width=640,height=480,pixelformat=NM12 \
	--stream-mmap --stream-count=2 --stream-to="$R/mplane.nv12"
"$daemon" --device video43 --source "uvc:$cam" --size 640x480 --format NV12 \
	>>"$R/daemon-mplane.log" 2>&1 &
pid=$!
vm_on_exit kill "$pid"
vm_wait_node /dev/video43 90 || bail_out "/dev/video43 did not appear: $(tail -5 "$R/daemon-mplane.log")"
v4l2-ctl -d /dev/video43 --list-formats >"$R/mplane-formats.txt" 2>&1 || true
check "our node is single-planar and offers NV12 (vivid's NM12)" bash -c \
	"grep -q \"'NV12'\" $R/mplane-formats.txt && grep -q 'Video Capture\$' $R/mplane-formats.txt"
py_checks python3 - /dev/video43 "$R" <<'PY'
exec(open("/tmp/pt.py").read())
size = 640 * 480 * 3 // 2
fd = os.open(sys.argv[1], os.O_RDWR)
frames = [frame(fd, size) for _ in range(3)]
os.close(fd)
theirs = open(f"{sys.argv[2]}/mplane.nv12", "rb").read()[-size:]
d = differ(frames[-1], theirs)
check(len(frames[-1]) == size and d <= size // 1000,
      f"NV12 frames equal vivid's NV12M planes joined ({d} of {size} bytes differ)")
PY
python3 - /dev/video43 "$R/unplug-mplane.log" <<'PY' &
import os, sys, time
dev, log = sys.argv[1], sys.argv[2]
w, h = 640, 480
size = w * h * 3 // 2
fd = os.open(dev, os.O_RDWR)
t0 = time.monotonic()
with open(log, "w") as f:
    while time.monotonic() - t0 < 400:
        b = b""
        try:
            while len(b) < size:
                b += os.read(fd, size - len(b))
        except OSError as e:
            f.write(f"ERROR {e.errno}\n")
            break
        # The NO SIGNAL card in NV12: its bottom luma row is Y' 43.
        row = b[(h - 1) * w:h * w]
        kind = "card" if max(row) <= 45 and min(row) >= 41 else "camera"
        f.write(f"{time.monotonic() - t0:.2f} {kind}\n")
        f.flush()
PY
reader=$!
unplug_replug "$R/unplug-mplane.log" "the multi-planar reader" "the multi-planar vivid"
if wait_log "$R/unplug-mplane.log" camera 5 300 1; then ok "camera frames again after the bind"; else not_ok "camera frames again after the bind" "$(tail -3 "$R/unplug-mplane.log")"; fi
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
check "the reader never saw an error" bash -c "! grep -q ERROR $R/unplug-mplane.log"
vm_compliance "v4l2-compliance -s on the multi-planar camera's node" \
	"$R/compliance-mplane.txt" 900 v4l2-compliance -d /dev/video43 -s
check "multi-planar daemon alive" kill -0 "$pid"
diag "t=${SECONDS}s: done"
