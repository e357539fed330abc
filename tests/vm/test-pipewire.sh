#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# v4l2cuse-pipewire: the nodes as PipeWire cameras, with PipeWire and
# WirePlumber running in the VM (as root, without systemd or logind:
# WirePlumber's bluetooth part is left out, it needs logind).
#
#  1. Started before PipeWire, the bridge says so in one line and retries
#     with a back-off; once PipeWire is up it publishes one node per
#     device: media.class Video/Source, media.role Camera, node.name
#     v4l2cuse.videoN, node.description/nick the label, one EnumFormat per
#     format and size; GStreamer's device monitor lists them.
#  2. On demand: the bridge holds no handle of a node while nobody captures
#     through PipeWire, and a plain read() client uses the node meanwhile.
#  3. pipewiresrc captures whole frames with the 75% bars in YUY2 (with
#     increasing timestamps and sequence numbers) and in RGB at two sizes;
#     right after, a read() client has the exclusive node again.
#  4. share=true: a read() client and a PipeWire capture at the same time.
#     An exclusive node busy with a read() client: the bridge says why, the
#     PipeWire consumer gets no frame, the read() client is not disturbed,
#     and the node works again after.
#  5. pipewire:fake-cam (a device fed from PipeWire): a fake camera
#     (videotestsrc ! pipewiresink, Video/Source, role Camera) is not linked
#     while the device has no reader, and is within seconds of the first;
#     its white frames reach a read() reader and ffmpeg under v4l2cuse-run;
#     the fake camera stopped: the placeholder and SIGNAL lost, started
#     again: its frames, the reader never erred nor reopened; the capture
#     node is not published back into PipeWire.
#  6. v4l2cuse-ctl remove/add: the node goes and comes; the daemon
#     restarting: the nodes come back with the bridge untouched; PipeWire
#     restarting: the bridge reconnects.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

bridge=$V4L2CUSE_BUILD/pw-bridge/v4l2cuse-pipewire
client=$V4L2CUSE_BUILD/tests/vm/share-client
check_frames=$V4L2CUSE_SRC/tests/vm/check-frames.py
T=$(mktemp -d)

vm_require pipewire wireplumber pw-dump pw-cli jq dbus-daemon gst-launch-1.0 \
	gst-device-monitor-1.0 v4l2-ctl python3 || bail_out "missing programs"
[[ -x $bridge ]] || bail_out "$bridge is not built (meson -Dpipewire=enabled)"
[[ -x $client ]] || bail_out "$client is not built"
gst-inspect-1.0 pipewiresrc >/dev/null 2>&1 || bail_out "GStreamer has no pipewiresrc (gstreamer1.0-pipewire)"

vm_modprobe cuse
vm_wait_node /dev/cuse 10

cat >"$T/v4l2cuse.conf" <<'CONF'
[device cam-a]
node = video42
label = Bridge cam A
source = pattern
formats = YUYV, RGB3, MJPG
sizes = 320x240, 640x480
frame-rates = 30, 15
format = YUYV
size = 320x240
share = true

[device cam-b]
node = video43
label = Bridge cam B
source = pattern
formats = YUYV
sizes = 320x240
frame-rates = 15

[device from-pw]
node = video45
label = From PipeWire
source = pipewire:fake-cam,writer=video46,sizes=320x240,fps=15
format = YUYV
size = 320x240
share = true
CONF

start_daemon()
{
	"$daemon" --config "$T/v4l2cuse.conf" >>"$R/daemon.log" 2>&1 &
	daemon_pid=$!
	vm_wait_node /dev/video42 120 && vm_wait_node /dev/video43 120 &&
		vm_wait_node /dev/video45 120 && vm_wait_node /dev/video46 120
}
start_daemon || bail_out "the daemon's nodes did not appear: $(tail -5 "$R/daemon.log")"
vm_on_exit bash -c 'kill $(cat '"$T"'/daemon.pid 2>/dev/null) 2>/dev/null; true'
echo "$daemon_pid" >"$T/daemon.pid"

# --- PipeWire's session, the bridge first ------------------------------------
export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
dbus-daemon --session --fork --address="$DBUS_SESSION_BUS_ADDRESS" --print-pid >"$T/dbus.pid"
vm_on_exit bash -c 'kill $(cat '"$T"'/dbus.pid) 2>/dev/null; true'
cp -r /usr/share/wireplumber "$T/wpconf"
sed -i '/bluetooth.lua/d' "$T/wpconf/wireplumber.conf"

G_MESSAGES_DEBUG=v4l2cuse-pipewire "$bridge" >"$R/bridge.log" 2>&1 &
bridge_pid=$!
vm_on_exit bash -c "kill $bridge_pid 2>/dev/null; true"

vm_wait_for "without PipeWire the bridge says so" 60 \
	grep -q 'cannot connect to PipeWire.*is it running' "$R/bridge.log" || true
sleep 8	# back-off 1 + 2 + 4 s: at least three attempts
check "... in one line, retrying quietly" bash -c "
	kill -0 $bridge_pid &&
	[[ \$(grep -c 'cannot connect to PipeWire.*is it running' '$R/bridge.log') == 1 ]] &&
	[[ \$(grep -c 'next try in' '$R/bridge.log') -ge 2 ]]"

start_pipewire()
{
	pipewire >>"$R/pipewire.log" 2>&1 &
	echo $! >"$T/pipewire.pid"
	vm_wait_for "pipewire answers" 120 pw-cli info 0 || return 1
	WIREPLUMBER_CONFIG_DIR=$T/wpconf wireplumber >>"$R/wireplumber.log" 2>&1 &
	echo $! >"$T/wireplumber.pid"
}
stop_pipewire()
{
	kill "$(cat "$T/wireplumber.pid")" "$(cat "$T/pipewire.pid")" 2>/dev/null || true
	wait "$(cat "$T/wireplumber.pid")" "$(cat "$T/pipewire.pid")" 2>/dev/null || true
}
start_pipewire || bail_out "pipewire did not start: $(tail -5 "$R/pipewire.log")"
vm_on_exit stop_pipewire
vm_wait_for "the bridge connects once PipeWire is there" 120 \
	grep -q 'connected to PipeWire' "$R/bridge.log" || true

# pw_nodes: "node.name<TAB>media.class<TAB>media.role<TAB>description<TAB>nick" of ours.
pw_nodes()
{
	pw-dump 2>/dev/null | jq -r '.[] | select(.type == "PipeWire:Interface:Node") |
		.info.props | select(."node.name" // "" | startswith("v4l2cuse.")) |
		[."node.name", ."media.class", ."media.role", ."node.description",
		 ."node.nick"] | @tsv' | sort
}
# has_node NAME / no_node NAME: for vm_wait_for.
has_node()
{
	pw_nodes | cut -f1 | grep -qx "$1"
}
no_node()
{
	pw-dump >/dev/null 2>&1 && ! has_node "$1"
}
export -f pw_nodes has_node no_node

vm_wait_for "v4l2cuse.video42 and v4l2cuse.video43 are published" 180 \
	bash -c 'has_node v4l2cuse.video42 && has_node v4l2cuse.video43' || true
pw_nodes >"$R/nodes.tsv"
check "one camera node per device with its properties" diff -u - "$R/nodes.tsv" <<'EOF'
v4l2cuse.video42	Video/Source	Camera	Bridge cam A	Bridge cam A
v4l2cuse.video43	Video/Source	Camera	Bridge cam B	Bridge cam B
EOF
pw-dump >"$R/pw-dump.json" 2>/dev/null || true
# One EnumFormat per format and size, frame rates as an enum (30 default, then 30, 15).
check "video42's EnumFormat: YUY2, RGB, mjpg at 320x240 and 640x480, rates 30 and 15" python3 - "$R/pw-dump.json" <<'PY'
import json, sys
node = next(o for o in json.load(open(sys.argv[1]))
            if o.get("type") == "PipeWire:Interface:Node"
            and o["info"]["props"].get("node.name") == "v4l2cuse.video42")
got = []
for p in node["info"]["params"]["EnumFormat"]:
    # pw-dump prints an Enum choice as {"default": D, "alt1": A, "alt2": B}.
    rate = p["framerate"]
    rates = [rate["default"]] + [rate[k] for k in sorted(rate) if k.startswith("alt")]
    got.append((p["mediaSubtype"], p.get("format", "-"), p["size"]["width"],
                p["size"]["height"], [(r["num"], r["denom"]) for r in rates]))
    print(got[-1])
want = {(s, f, w, h) for s, f in (("raw", "YUY2"), ("raw", "RGB"), ("mjpg", "-"))
        for w, h in ((320, 240), (640, 480))}
rates_ok = all(g[4] == [(30, 1), (30, 1), (15, 1)] for g in got)
sys.exit(0 if {g[:4] for g in got} == want and len(got) == 6 and rates_ok else 1)
PY

check "gst-device-monitor-1.0 Video/Source lists both" bash -c "
	timeout 300 gst-device-monitor-1.0 Video/Source >'$R/device-monitor.txt' 2>&1;
	grep -q 'name  : Bridge cam A' '$R/device-monitor.txt' &&
	grep -q 'name  : Bridge cam B' '$R/device-monitor.txt'"

# --- on demand -----------------------------------------------------------------
# bridge_holds DEV: the bridge has DEV open.
bridge_holds()
{
	ls -l "/proc/$bridge_pid/fd" 2>/dev/null | grep -q -- "-> $1\$"
}
export -f bridge_holds
export bridge_pid
check "idle: the bridge holds neither node" bash -c '! bridge_holds /dev/video42 && ! bridge_holds /dev/video43'
check "idle: a read() client uses the exclusive node, bars" \
	timeout 300 python3 "$check_frames" /dev/video43 320 240 --frames 3 --bars75 --overlay-rows 40

# capture NODE CAPS FRAMES OUT: pipewiresrc -> identity (buffer log) -> file.
# OUT.log gets identity's line per buffer and pipewiresrc's log of each
# buffer's header (its pts); OUT.window the uptime (CLOCK_BOOTTIME, which is
# CLOCK_MONOTONIC in a VM that never suspends) before and after.
capture()
{
	local t0 t1 rc=0
	read -r t0 _ </proc/uptime
	GST_DEBUG=pipewiresrc:6 GST_DEBUG_NO_COLOR=1 \
		timeout "${CAPTURE_TIMEOUT:-300}" gst-launch-1.0 -v pipewiresrc target-object="$1" num-buffers="$3" \
		always-copy=true ! "$2" ! identity silent=false ! filesink location="$4" \
		>"$4.log" 2>&1 || rc=$?
	read -r t1 _ </proc/uptime
	echo "$t0 $t1" >"$4.window"
	return $rc
}
export -f capture

# buffers_ok OUT SIZE N: N buffers of SIZE bytes; their offsets (the V4L2
# sequence numbers) strictly increasing; their header timestamps (the V4L2
# ones) strictly increasing and taken during the capture. (The buffers' PTS
# as GStreamer prints them are relative to the pipeline's start and 0 for
# frames taken before it: not what we check.)
buffers_ok()
{
	python3 - "$@" <<'PY'
import re, sys
out, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(out + ".log", errors="replace").read().splitlines()
t0, t1 = (float(x) * 1e9 for x in open(out + ".window").read().split())
chain = re.compile(r"chain .*?\((\d+) bytes, .*?offset: (\d+|none)")
bufs = [m.groups() for m in map(chain.search, lines) if m]
pts = [int(m.group(1)) for m in map(re.compile(r"\bpts (\d+), dts_offset").search, lines)
       if m][:n]
seq = [int(o) for _, o in bufs if o != "none"]
print(f"{len(bufs)} buffers, sizes {sorted({b for b, _ in bufs})}")
print("sequence:", seq)
print("header pts (s):", [round(p / 1e9, 3) for p in pts], f"capture window {t0 / 1e9:.2f}..{t1 / 1e9:.2f}")
ok = len(bufs) == n and all(int(b) == size for b, _ in bufs) and len(seq) == n
ok = ok and all(a < b for a, b in zip(seq, seq[1:]))
ok = ok and len(pts) == n and all(a < b for a, b in zip(pts, pts[1:]))
ok = ok and all(t0 - 1e7 <= p <= t1 + 1e7 for p in pts)
sys.exit(0 if ok else 1)
PY
}

check "pipewiresrc YUY2 320x240: 8 buffers of one frame each" \
	capture v4l2cuse.video43 video/x-raw,format=YUY2,width=320,height=240 8 "$R/b-yuy2.raw"
check "... with increasing sequence numbers and timestamps taken during the capture" buffers_ok "$R/b-yuy2.raw" 153600 8
check "... whole frames with the bars" \
	python3 "$check_frames" "$R/b-yuy2.raw" 320 240 --frames 8 --bars75 --overlay-rows 40
vm_wait_for "the capture over: the bridge released video43" 30 \
	bash -c '! bridge_holds /dev/video43' || true
check "right after, a read() client has the exclusive node" \
	timeout 300 python3 "$check_frames" /dev/video43 320 240 --frames 3 --bars75 --overlay-rows 40

for size in 320x240 640x480; do
	w=${size%x*} h=${size#*x}
	check "pipewiresrc RGB $size: 5 whole frames" \
		capture v4l2cuse.video42 "video/x-raw,format=RGB,width=$w,height=$h" 5 "$R/a-rgb-$size.raw"
	check "... of $((w * h * 3)) bytes each" buffers_ok "$R/a-rgb-$size.raw" $((w * h * 3)) 5
	check "... with the bars in R'G'B'" python3 "$check_frames" "$R/a-rgb-$size.raw" "$w" "$h" \
		--format RGB3 --frames 5 --bars75 --overlay-rows 40
done

# --- share=true and a busy exclusive node ----------------------------------------
# The last capture left video42 at 640x480 RGB (a device keeps the format
# the last app set); the reader streams the device's format, YUYV.
check "v4l2-ctl sets video42 back to 320x240 YUYV" \
	v4l2-ctl -d /dev/video42 --set-fmt-video=width=320,height=240,pixelformat=YUYV
"$client" /dev/video42 read 0 >"$R/reader-a.out" 2>&1 &
reader=$!
sleep 3
check "a read() client streams from shared video42" kill -0 $reader
check "share=true: PipeWire captures meanwhile" \
	capture v4l2cuse.video42 video/x-raw,format=YUY2,width=320,height=240 10 "$R/a-shared.raw"
check "... whole frames with the bars" \
	python3 "$check_frames" "$R/a-shared.raw" 320 240 --frames 10 --bars75 --overlay-rows 40
check "... while the read() client kept streaming" kill -0 $reader
kill -TERM $reader 2>/dev/null || true
rc=0
wait $reader || rc=$?
check "... and got every frame whole with the bars" bash -c "
	cat '$R/reader-a.out'; (($rc == 0)) && grep -qE 'frames=[1-9]' '$R/reader-a.out'"

"$client" /dev/video43 read 0 >"$R/reader-b.out" 2>&1 &
reader=$!
sleep 3
check "a read() client streams from exclusive video43" kill -0 $reader
# The bridge fails its stream (the link fails); PipeWire 0.3 does not pass
# that on to the consumer's stream, so pipewiresrc waits without frames.
check "exclusive and busy: the PipeWire consumer gets no frame" bash -c "
	CAPTURE_TIMEOUT=120 capture v4l2cuse.video43 video/x-raw,format=YUY2,width=320,height=240 \
		3 '$R/b-busy.raw';
	rc=\$?; tail -3 '$R/b-busy.raw.log'; ((rc != 0)) && ! [[ -s '$R/b-busy.raw' ]]"
check "... the bridge says why" grep -q 'video43: cannot set the format.*busy' "$R/bridge.log"
kill -TERM $reader 2>/dev/null || true
rc=0
wait $reader || rc=$?
check "... the read() client was not disturbed" bash -c "
	cat '$R/reader-b.out'; (($rc == 0)) && grep -qE 'frames=[1-9]' '$R/reader-b.out'"
vm_wait_for "... and v4l2cuse.video43 is published again for the next consumer" 60 bash -c "
	[[ \$(grep -c 'published as PipeWire node v4l2cuse.video43' '$R/bridge.log') -ge 2 ]] &&
	has_node v4l2cuse.video43" || true
check "... which captures" \
	capture v4l2cuse.video43 video/x-raw,format=YUY2,width=320,height=240 3 "$R/b-again.raw"

# --- pipewire:fake-cam, a device fed from PipeWire --------------------------------
diag "t=${SECONDS}s: pipewire: source"
fake_cam_start()
{
	gst-launch-1.0 videotestsrc is-live=true pattern=white ! \
		video/x-raw,format=YUY2,width=320,height=240,framerate=15/1 ! \
		pipewiresink mode=provide \
		stream-properties="props,media.class=Video/Source,media.role=Camera,node.name=fake-cam,node.description=Fake" \
		>>"$R/fake-cam.log" 2>&1 &
	echo $! >"$T/fake-cam.pid"
}
fake_cam_stop()
{
	kill "$(cat "$T/fake-cam.pid")" 2>/dev/null || true
	wait "$(cat "$T/fake-cam.pid")" 2>/dev/null || true
}
# fake_cam_links: how many links leave the fake camera's node.
fake_cam_links()
{
	pw-dump 2>/dev/null | jq '[.[] | select(.type == "PipeWire:Interface:Node" and
		.info.props."node.name" == "fake-cam") | .id] as $ids |
		[.[] | select(.type == "PipeWire:Interface:Link" and
		(.info."output-node-id" as $o | $ids | index($o)))] | length'
}
has_fake_cam()
{
	pw_nodes_all | grep -qx fake-cam
}
pw_nodes_all()
{
	pw-dump 2>/dev/null | jq -r '.[] | select(.type == "PipeWire:Interface:Node") | .info.props."node.name"'
}
export -f fake_cam_links has_fake_cam pw_nodes_all
fake_cam_start
vm_on_exit fake_cam_stop
vm_wait_for "the fake camera is a PipeWire node" 300 bash -c has_fake_cam || true
check "the bridge feeds video46 (pipewire:fake-cam's writer node)" \
	grep -q '/dev/video46: feeds "From PipeWire' "$R/bridge.log"
check "the capture node video45 is not published into PipeWire" bash -c '! has_node v4l2cuse.video45'
sleep 5
check "no reader: the fake camera has no link, the bridge no stream" bash -c "
	[[ \$(fake_cam_links) == 0 ]] && ! pw_nodes_all | grep -q '^v4l2cuse-feed'"

# lumalog DEV OUT: read() frames until SIGTERM; one line per frame:
# "seconds white" (white: 1 if every luma sample is 235 +- 3 and the chroma
# neutral, the fake camera's frame). Exit 1 at the first failed read().
cat >"$T/lumalog.py" <<'PY'
import os, signal, sys, time
dev, out = sys.argv[1], sys.argv[2]
size = 320 * 240 * 2
stop = False
def term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, term)
fd = os.open(dev, os.O_RDONLY)
with open(out, "w", buffering=1) as f:
    while not stop:
        try:
            b = os.read(fd, size)
        except InterruptedError:
            continue
        if len(b) != size:
            print(f"read() gave {len(b)} bytes", file=sys.stderr)
            sys.exit(1)
        white = all(abs(y - 235) <= 3 for y in b[0::2]) and all(abs(c - 128) <= 4 for c in b[1::2])
        f.write(f"{time.monotonic():.3f} {int(white)}\n")
PY
# white_since T: a white frame came after monotonic time T; not_white_since T likewise.
white_since()
{
	awk -v t="$1" '$1 > t && $2 == 1 { f = 1 } END { exit !f }' "$LUMALOG"
}
not_white_since()
{
	awk -v t="$1" '$1 > t && $2 == 0 { f = 1 } END { exit !f }' "$LUMALOG"
}
now_mono()
{
	python3 -c 'import time; print(f"{time.monotonic():.3f}")'
}
LUMALOG=$R/lumalog.txt
export -f white_since not_white_since
export LUMALOG
t_start=$(now_mono)
python3 "$T/lumalog.py" /dev/video45 "$R/lumalog.txt" 2>"$R/lumalog.err" &
lumalog=$!
vm_wait_for "a reader: the bridge links the fake camera" 60 bash -c '[[ $(fake_cam_links) -ge 1 ]]' || true
t_linked=$(now_mono)
diag "linked $(awk -v a="$t_start" -v b="$t_linked" 'BEGIN { printf "%.2f", b - a }') s after the reader started (polled every 1 s, under TCG)"
# The bridge's own clock: from the client-usage event to frames flowing.
diag "the bridge: $(python3 - "$R/bridge.log" <<'PY'
import re, sys
t = lambda l: sum(float(x) * m for x, m in zip(re.search(r"(\d+):(\d+):([\d.]+)", l).groups(), (3600, 60, 1)))
lines = open(sys.argv[1]).read().splitlines()
seen = next(l for l in lines if "video46: 1 reader(s)" in l and "DEBUG" in l)
up = next(l for l in lines[lines.index(seen):] if "v4l2cuse-feed.video46: stream paused -> streaming" in l)
print(f"{t(up) - t(seen):.2f} s from its first reader to the PipeWire stream streaming")
PY
)"
vm_wait_for "the reader gets the fake camera's white frames" 120 bash -c "white_since $t_start" || true
check "pipewire:fake-cam: whole white frames (Y' 235, neutral chroma) in the reader" white_since "$t_start"
check "ffmpeg under v4l2cuse-run captures 5 white frames meanwhile (share=true)" bash -c "
	timeout 300 '$run' ffmpeg -nostdin -loglevel error -f v4l2 -video_size 320x240 -input_format yuyv422 \
		-i /dev/video45 -frames:v 5 -f rawvideo -y '$R/feed-ffmpeg.yuv' &&
	python3 - '$R/feed-ffmpeg.yuv' <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
n = 320 * 240 * 2
frames = [b[i:i + n] for i in range(0, len(b), n)]
print(len(frames), 'frames')
# the last frame is the fake camera's (the first may still be the card)
sys.exit(0 if len(frames) == 5 and all(abs(y - 235) <= 3 for y in frames[-1][0::2]) else 1)
PY"
fake_cam_stop
t_stopped=$(now_mono)
export t_stopped
vm_wait_for "the fake camera stopped: the reader gets the placeholder" 60 bash -c "not_white_since $t_stopped" || true
check "... and v4l2cuse-ctl list says SIGNAL lost" bash -c \
	"'$ctl' list 2>&1 | tee '$R/ctl-list-lost.txt' | awk '\$1 == \"from-pw\" && \$4 == \"lost\" { f = 1 } END { exit !f }'"
check "... the bridge says the stream stopped" grep -q '/dev/video46: the PipeWire stream' "$R/bridge.log"
check "... the reader is still reading" kill -0 $lumalog
diag "placeholder $(awk -v t="$t_stopped" '$1 > t && $2 == 0 { printf "%.2f", $1 - t; exit }' "$R/lumalog.txt") s after the fake camera was killed"
fake_cam_start
t_again=$(now_mono)
vm_wait_for "the fake camera back: its frames again, same reader" 120 bash -c "white_since $t_again" || true
check "... the reader never erred (same process, no failed read)" bash -c "kill -0 $lumalog && ! [[ -s '$R/lumalog.err' ]]"
kill -TERM $lumalog
rc=0
wait $lumalog || rc=$?
check "... and exits cleanly ($(wc -l <"$R/lumalog.txt") frames)" test "$rc" = 0
vm_wait_for "no reader: the fake camera is unlinked again" 60 bash -c '[[ $(fake_cam_links) == 0 ]]' || true
fake_cam_stop

# --- nodes going and coming ------------------------------------------------------
check "ctl remove cam-b" "$ctl" remove cam-b
vm_wait_for "... its PipeWire node disappears" 60 bash -c 'no_node v4l2cuse.video43' || true
check "... the other stays" has_node v4l2cuse.video42
check "ctl add cam-c (video44)" "$ctl" add cam-c node=video44 source=pattern size=320x240 \
	"label=Bridge cam C"
vm_wait_for "... its PipeWire node appears" 120 bash -c 'has_node v4l2cuse.video44' || true
check "... with its label" bash -c "pw_nodes | grep -q \$'^v4l2cuse.video44\tVideo/Source\tCamera\tBridge cam C'"

kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
vm_wait_for "the daemon stopped: every node leaves PipeWire" 60 \
	bash -c 'no_node v4l2cuse.video42 && no_node v4l2cuse.video44' || true
start_daemon || not_ok "the daemon restarts" "$(tail -5 "$R/daemon.log")"
echo "$daemon_pid" >"$T/daemon.pid"
vm_wait_for "the daemon restarted: the nodes are back" 180 \
	bash -c 'has_node v4l2cuse.video42 && has_node v4l2cuse.video43' || true
check "... with the same bridge" kill -0 "$bridge_pid"
check "... and capture" capture v4l2cuse.video42 video/x-raw,format=YUY2,width=320,height=240 3 \
	"$R/a-restarted.raw"
check "... whole frames with the bars" \
	python3 "$check_frames" "$R/a-restarted.raw" 320 240 --frames 3 --bars75 --overlay-rows 40

stop_pipewire
vm_wait_for "PipeWire stopped: the bridge notices" 60 \
	grep -q 'lost the connection to PipeWire' "$R/bridge.log" || true
start_pipewire || not_ok "pipewire restarts" "$(tail -5 "$R/pipewire.log")"
vm_wait_for "PipeWire restarted: the nodes are published again" 180 \
	bash -c 'has_node v4l2cuse.video42 && has_node v4l2cuse.video43' || true

vm_term_check "SIGTERM: the bridge exits with status 0" "$bridge_pid" 60
check "the bridge logged no critical" bash -c "! grep -E 'CRITICAL|ERROR \*\*' '$R/bridge.log'"
diag "bridge log: $(wc -l <"$R/bridge.log") lines in $R/bridge.log"
