#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Sources on demand against real servers (docs/sources.md), one daemon:
#  - network streams from servers in the VM (netsrv.py, written below),
#    320x240 white at 10 fps:
#      rtsp  uri:rtsp://  GStreamer's RTSP server (Python bindings), JPEG
#                         over RTP;
#      srt   uri:srt://   an SRT listener sending MPEG-TS with H.264
#                         (openh264);
#      http  uri:http://  an HTTP MJPEG (multipart/x-mixed-replace) server,
#                         as IP cameras and phone apps serve it;
#    no server sees a client while nobody reads; a read() reader gets the
#    NO SIGNAL card, then uniform white frames, and the server sees the
#    daemon connect after the reader opened; every server killed -> the
#    same reader gets the placeholder (timeout=2000) and v4l2cuse-ctl list
#    says SIGNAL lost; the servers back -> white frames again for that
#    reader (the back-off reconnects), which never got a read error;
#  - uvc: on demand over vivid: after a reader the idle daemon holds no fd
#    of the camera, so rmmod vivid (a camera unplugged while idle)
#    succeeds; the daemon goes on, a new reader gets the placeholder at the
#    device's size, and after modprobe vivid the camera's frames, without
#    reopening.
# Everything waits with generous limits (TCG is 20-40 times slower than
# native); the measured times are diag lines, only far larger ones fail.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require python3 v4l2-ctl || bail_out "missing programs"

T=$(mktemp -d)
nets=(rtsp srt http)

vm_modprobe cuse
vm_wait_node /dev/cuse 10
# Before the daemon: the uvc source looks at the camera when it starts.
cam=$(vm_load_vivid) || bail_out "vivid did not come up"
diag "vivid capture node: $cam"
# No OSD text: a camera frame never has the placeholder's flat bottom row.
v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true

# stop_pid PID: a cleanup for a process that may have ended already.
stop_pid()
{
	kill "$1" 2>/dev/null || true
}

# The elements of the servers and of the daemon's pipelines, and the white
# JPEG the HTTP server sends (one python start; the first use of GStreamer
# in the VM also builds its plugin registry).
diag "t=${SECONDS}s: GStreamer"
if ! timeout 600 python3 - "$T/white.jpg" >"$R/gst-check.txt" 2>&1 <<'PY'; then
import sys, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
need = ["videotestsrc", "jpegenc", "jpegdec", "rtpjpegpay", "rtpjpegdepay", "rtspsrc",
        "openh264enc", "openh264dec", "h264parse", "mpegtsmux", "tsdemux", "srtsink",
        "srtsrc", "souphttpsrc", "multipartdemux", "uridecodebin"]
missing = [e for e in need if not Gst.ElementFactory.find(e)]
try:
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GstRtspServer
except (ImportError, ValueError) as e:
    missing.append(f"GstRtspServer ({e})")
if missing:
    sys.exit("missing: " + " ".join(missing))
p = Gst.parse_launch("videotestsrc num-buffers=1 pattern=white ! "
                     "video/x-raw,format=I420,width=320,height=240 ! jpegenc ! "
                     f"filesink location={sys.argv[1]}")
p.set_state(Gst.State.PLAYING)
msg = p.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE,
                                     Gst.MessageType.EOS | Gst.MessageType.ERROR)
p.set_state(Gst.State.NULL)
if msg.type == Gst.MessageType.ERROR:
    sys.exit(f"the white JPEG: {msg.parse_error()[0].message}")
PY
	sed 's/^/#   /' "$R/gst-check.txt"
	bail_out "GStreamer elements or bindings missing: run tools/dev.sh deps on the host"
fi
ok "GStreamer has the servers' and the sources' elements; white JPEG $(stat -c %s "$T/white.jpg") bytes"

# netsrv.py KIND PORT [JPEG]: a server of 320x240 white at 10 fps on
# 127.0.0.1:PORT. Lines "EPOCH listening", "EPOCH client" (a client
# connected), "EPOCH gone" (it left).
cat >"$T/netsrv.py" <<'PY'
import os, sys, time

WHITE = ("videotestsrc is-live=true pattern=white ! "
         "video/x-raw,format=I420,width=320,height=240,framerate=10/1")

def say(what):
    print(f"{time.time():.3f} {what}", flush=True)

def http(port, jpeg_path):
    # multipart/x-mixed-replace, as MJPEG cameras serve it.
    import http.server, socketserver
    jpeg = open(jpeg_path, "rb").read()
    part = (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(jpeg) +
            jpeg + b"\r\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            say(f"client GET {self.path}")
            if self.path != "/stream.mjpg":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(part)
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                say("gone")

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", port), Handler)
    say("listening")
    server.serve_forever()

def rtsp(port, Gst):
    # JPEG over RTP (RFC 2435 carries 4:2:0 and 4:2:2 only: I420 above).
    import gi
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GstRtspServer
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(f"( {WHITE} ! jpegenc ! rtpjpegpay name=pay0 pt=96 )")
    factory.set_shared(True)
    server.get_mount_points().add_factory("/test", factory)

    def connected(server, client):
        say("client")
        client.connect("closed", lambda c: say("gone"))

    server.connect("client-connected", connected)
    if not server.attach(None):
        sys.exit(f"cannot listen on port {port}")
    return server

def srt(port, Gst):
    # MPEG-TS in SRT messages of 7 packets (1316 bytes): with bigger buffers
    # the receiver gets none of the pictures. A keyframe every second.
    p = Gst.parse_launch(f"{WHITE} ! openh264enc gop-size=10 ! h264parse config-interval=-1 ! "
                         "mpegtsmux alignment=7 ! srtsink name=sink "
                         f"uri=srt://127.0.0.1:{port}?mode=listener wait-for-connection=false")
    sink = p.get_by_name("sink")
    sink.connect("caller-added", lambda s, i, a: say("client"))
    sink.connect("caller-removed", lambda s, i, a: say("gone"))

    def message(bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            say(f"error {msg.parse_error()[0].message}")
            os._exit(1)

    p.get_bus().add_signal_watch()
    p.get_bus().connect("message", message)
    p.set_state(Gst.State.PLAYING)
    return p

kind, port = sys.argv[1], int(sys.argv[2])
if kind == "http":
    http(port, sys.argv[3])
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst, GLib
Gst.init(None)
keep = {"rtsp": rtsp, "srt": srt}[kind](port, Gst)
say("listening")
GLib.MainLoop().run()
PY

# reader.py RES TMP NAME:DEV:W:H:WANT...: a read() reader per device (a
# thread each) logging every frame to RES/reader-NAME.log as "EPOCH KIND
# YMIN YMAX": KIND "white" (every Y' within 4 of WANT, chroma within 4 of
# 128; WANT "-": never), "card" (the NO SIGNAL placeholder: its bottom row
# is the card's background, Y' 43, Cb/Cr 128) or "other"; "EPOCH open"
# first, "EPOCH stop" when TMP/stop-NAME exists, "EPOCH ERROR ..." on a
# failed or short read (then it stops).
cat >"$T/reader.py" <<'PY'
import os, sys, threading, time

def near(v, tol):
    return bytes(x for x in range(256) if abs(x - v) <= tol)

CHROMA, CARD_Y, CARD_C = near(128, 4), near(43, 2), near(128, 2)

def read(res, tmp, name, dev, w, h, want):
    size = w * h * 2
    white = near(int(want), 4) if want != "-" else None
    with open(f"{res}/reader-{name}.log", "w", buffering=1) as log:
        try:
            fd = os.open(dev, os.O_RDONLY)
            log.write(f"{time.time():.3f} open {dev} {w}x{h}\n")
            end = time.time() + 1800
            while not os.path.exists(f"{tmp}/stop-{name}") and time.time() < end:
                b = os.read(fd, size)
                t = time.time()
                if len(b) != size:
                    log.write(f"{t:.3f} ERROR read() gave {len(b)} bytes, not {size}\n")
                    return
                # translate(None, allowed) leaves the samples out of range
                # (C speed: a python loop over 76800 samples costs too much
                # under TCG).
                y = b[0::2]
                row = b[(h - 1) * w * 2:]
                if white and not y.translate(None, white) and not b[1::2].translate(None, CHROMA):
                    kind = "white"
                elif not row[0::2].translate(None, CARD_Y) and not row[1::2].translate(None, CARD_C):
                    kind = "card"
                else:
                    kind = "other"
                s = y[::97]
                log.write(f"{t:.3f} {kind} {min(s)} {max(s)}\n")
            os.close(fd)
            log.write(f"{time.time():.3f} stop\n")
        except OSError as e:
            log.write(f"{time.time():.3f} ERROR {e}\n")

res, tmp = sys.argv[1], sys.argv[2]
threads = []
for spec in sys.argv[3:]:
    name, dev, w, h, want = spec.split(":")
    threads.append(threading.Thread(target=read, args=(res, tmp, name, dev, int(w), int(h), want)))
    threads[-1].start()
for t in threads:
    t.join()
PY

# start_server NAME: netsrv.py for NAME in the background, its output
# appended to $R/server-NAME.log, its pid in srv_pid[NAME].
declare -A srv_pid port=([rtsp]=8554 [srt]=7001 [http]=8080)
start_server()
{
	local extra=()
	[[ $1 != http ]] || extra=("$T/white.jpg")
	python3 "$T/netsrv.py" "$1" "${port[$1]}" "${extra[@]}" >>"$R/server-$1.log" 2>&1 &
	srv_pid[$1]=$!
	vm_on_exit stop_pid "${srv_pid[$1]}"
}

# frames: an awk program for vm_wait_for on a log of reader.py or
# netsrv.py: whether it has n lines of kind k (2nd field) after line from
# (-v n=N -v k=KIND -v from=LINE).
# shellcheck disable=SC2016 # awk's fields, not the shell's
frames='NR > from && $2 == k { c++ } END { exit c < n }'

# signal_count SIGNAL FILE ID...: how many of the devices ID have SIGNAL in
# v4l2cuse-ctl list, which is kept in $R/FILE.
signal_count()
{
	local want=$1 file=$2
	shift 2
	timeout 30 "$ctl" list >"$R/$file" 2>&1 || true
	awk -v want="$want" -v ids=" $* " \
		'/^[^ ]/ && index(ids, " " $1 " ") && $4 == want { n++ } END { print n + 0 }' "$R/$file"
}

# --- the servers and the daemon ------------------------------------------------

diag "t=${SECONDS}s: servers"
for n in "${nets[@]}"; do
	start_server "$n"
done
for n in "${nets[@]}"; do
	vm_wait_for "$n server listening on port ${port[$n]}" 300 \
		awk -v n=1 -v k=listening -v from=0 "$frames" "$R/server-$n.log" ||
		bail_out "$n server: $(tail -3 "$R/server-$n.log")"
done

# uri: and gst: options (sources/gst-live.c): timeout=2000 (no frame for
# 2 s is a lost stream), latency=100 (the RTSP and SRT jitter buffers).
live=timeout=2000,sizes=320x240,fps=10
cat >"$T/v4l2cuse.conf" <<CONF
[device rtsp]
node = video42
source = uri:rtsp://127.0.0.1:${port[rtsp]}/test,latency=100,$live
size = 320x240
format = YUYV
frame-rate = 10

[device srt]
node = video43
source = uri:srt://127.0.0.1:${port[srt]},latency=100,$live
size = 320x240
format = YUYV
frame-rate = 10

[device http]
node = video44
source = uri:http://127.0.0.1:${port[http]}/stream.mjpg,$live
size = 320x240
format = YUYV
frame-rate = 10

[device cam]
node = video45
source = uvc:$cam
size = 320x180
format = YUYV
frame-rate = 15
CONF
diag "t=${SECONDS}s: daemon"
vm_start_daemon video42 video43 video44 video45 -- --config "$T/v4l2cuse.conf"

# On demand: nothing connects before a reader comes.
sleep 5
check "idle: no server saw a client in 5 s of the daemon" \
	bash -c "! grep -H client $R/server-{rtsp,srt,http}.log"

# --- network streams: white, lost, back ------------------------------------------

diag "t=${SECONDS}s: readers"
# videotestsrc's white is Y' 235. H.264 keeps it (233-235 after a
# reconnect); jpegenc writes it as it is into a JPEG, which is full range
# (JFIF): jpegdec reads it back as 234 full range, 16 + 234 * 219 / 255 =
# 217 in limited range (measured through sources/gst-live.c with these
# servers outside the VM).
declare -A white=([rtsp]=217 [srt]=235 [http]=217)
python3 "$T/reader.py" "$R" "$T" "rtsp:/dev/video42:320:240:${white[rtsp]}" \
	"srt:/dev/video43:320:240:${white[srt]}" "http:/dev/video44:320:240:${white[http]}" \
	>"$R/reader-net.out" 2>&1 &
readers=$!
vm_on_exit touch "$T/stop-rtsp" "$T/stop-srt" "$T/stop-http"
for n in "${nets[@]}"; do
	vm_wait_for "$n: uniform white frames (Y' ${white[$n]} +-4, neutral chroma)" 300 \
		awk -v n=5 -v k=white -v from=0 "$frames" "$R/reader-$n.log" || true
done

diag "t=${SECONDS}s: servers killed"
declare -A from
for n in "${nets[@]}"; do
	from[$n]=$(wc -l <"$R/reader-$n.log" || echo 0)
	stop_pid "${srv_pid[$n]}"
	echo "$n kill $EPOCHREALTIME" >>"$R/events"
done
for n in "${nets[@]}"; do
	vm_wait_for "$n: server killed -> the placeholder for the same reader" 120 \
		awk -v n=3 -v k=card -v from="${from[$n]}" "$frames" "$R/reader-$n.log" || true
done
lost=$(signal_count lost list-lost.txt "${nets[@]}")
check "v4l2cuse-ctl list: SIGNAL lost for rtsp, srt and http ($lost of 3)" test "$lost" = 3
sed 's/^/#   /' "$R/list-lost.txt"

diag "t=${SECONDS}s: servers back"
for n in "${nets[@]}"; do
	from[$n]=$(wc -l <"$R/reader-$n.log" || echo 0)
	start_server "$n"
	echo "$n restart $EPOCHREALTIME" >>"$R/events"
done
for n in "${nets[@]}"; do
	vm_wait_for "$n server listening again" 300 \
		awk -v n=2 -v k=listening -v from=0 "$frames" "$R/server-$n.log" || true
done
# The reconnects back off up to 8 s between attempts (retry=500 doubled).
for n in "${nets[@]}"; do
	vm_wait_for "$n: server back -> white frames again for the same reader" 300 \
		awk -v n=5 -v k=white -v from="${from[$n]}" "$frames" "$R/reader-$n.log" || true
done
back=$(signal_count ok list-back.txt "${nets[@]}")
check "v4l2cuse-ctl list: SIGNAL ok for rtsp, srt and http ($back of 3)" test "$back" = 3

touch "$T/stop-rtsp" "$T/stop-srt" "$T/stop-http"
timeout 120 tail --pid="$readers" -f /dev/null || not_ok "the readers stop" "still running after 120 s"
# The daemon tears its pipelines down when the last reader goes: the
# servers' clients leave (a diag line each).
sleep 5
diag "t=${SECONDS}s: results"
py_checks python3 - "$R" <<'PY'
import sys
res = sys.argv[1]
events = {}
for line in open(f"{res}/events"):
    name, what, t = line.split()
    events[name, what] = float(t)

for name in ("rtsp", "srt", "http"):
    reader = [l.split() for l in open(f"{res}/reader-{name}.log")]
    server = [l.split() for l in open(f"{res}/server-{name}.log")]
    frames = [(float(l[0]), l[1]) for l in reader if l[1] in ("white", "card", "other")]
    opened = float(reader[0][0]) if reader and reader[0][1] == "open" else None
    stop = float(reader[-1][0]) if reader and reader[-1][1] == "stop" else None
    kill, back = events[name, "kill"], events[name, "restart"]
    errors = [" ".join(l) for l in reader if l[1] == "ERROR"]
    runs = []
    for _, k in frames:
        if not runs or runs[-1][0] != k:
            runs.append([k, 0])
        runs[-1][1] += 1
    print(f"{name}: runs " + " ".join(f"{k}x{n}" for k, n in runs))
    clients = [float(l[0]) for l in server if l[1] == "client"]
    if clients and opened:
        d = clients[0] - opened
        print(("PASS " if 0 <= d <= 60 else "FAIL ") +
              f"{name}: the server saw the daemon connect {d:.1f} s after the reader opened "
              "(limit 60 s under TCG)")
    else:
        print(f"FAIL {name}: the server saw the daemon connect after the reader opened")
    card = next((t for t, k in frames if t > kill and k == "card"), None)
    if card is not None:
        print(("PASS " if card - kill <= 30 else "FAIL ") +
              f"{name}: the placeholder {card - kill:.1f} s after the server was killed "
              "(timeout=2000; limit 30 s under TCG)")
    else:
        print(f"FAIL {name}: the placeholder after the server was killed")
    white = next((t for t, k in frames if t > back and k == "white"), None)
    if white is not None:
        print(f"{name}: white again {white - back:.1f} s after the server was started again")
    before = any(k == "white" for t, k in frames if t < kill)
    between = any(k == "card" for t, k in frames if kill < t < back)
    good = before and between and white is not None and not errors and stop is not None
    print(("PASS " if good else "FAIL ") +
          f"{name}: one reader, no read error: white, the placeholder after the kill, white "
          f"after the restart ({len(frames)} frames{'; ' + errors[0] if errors else ''})")
    gone = [float(l[0]) for l in server if l[1] == "gone" and stop and float(l[0]) > back]
    print(f"{name}: the server's client " +
          (f"left {gone[0] - stop:.1f} s after the reader stopped" if gone else "did not leave"))
PY

# --- uvc on demand: idle, unplugged, back ------------------------------------------

diag "t=${SECONDS}s: uvc on demand"
python3 "$T/reader.py" "$R" "$T" cam:/dev/video45:320:180:- >"$R/reader-cam1.out" 2>&1 &
reader=$!
vm_on_exit touch "$T/stop-cam"
vm_wait_for "uvc: a reader gets camera frames" 180 \
	awk -v n=5 -v k=other -v from=0 "$frames" "$R/reader-cam.log" || true
touch "$T/stop-cam"
timeout 60 tail --pid="$reader" -f /dev/null || true
mv "$R/reader-cam.log" "$R/reader-cam1.log" || true
rm -f "$T/stop-cam"

# The camera closes 1 s after the last reader (the grace). The fds must be
# readable (some are /dev files) and none the camera's.
vm_wait_for "uvc: idle again, the daemon holds no fd of $cam" 60 bash -c \
	"fds=\$(ls -l /proc/$daemon_pid/fd) && grep -q ' -> /dev/' <<<\"\$fds\" &&
	 ! grep -q ' -> $cam\$' <<<\"\$fds\"" || true
ls -l "/proc/$daemon_pid/fd" >"$R/daemon-fds-idle.txt" 2>&1 || true
vm_wait_for "rmmod vivid while the device is idle (the camera unplugged)" 30 /sbin/rmmod vivid ||
	diag "$(grep '^vivid ' /proc/modules)"
check "the daemon is alive after the unplug" kill -0 "$daemon_pid"

python3 "$T/reader.py" "$R" "$T" cam:/dev/video45:320:180:- >"$R/reader-cam2.out" 2>&1 &
reader=$!
vm_wait_for "uvc: a new reader gets the placeholder, 320x180 frames" 120 \
	awk -v n=5 -v k=card -v from=0 "$frames" "$R/reader-cam.log" || true
lost=$(signal_count lost list-unplugged.txt cam)
check "v4l2cuse-ctl list: SIGNAL lost for cam" test "$lost" = 1
cam_from=$(wc -l <"$R/reader-cam.log" || echo 0)
load_vivid()
{
	vm_load_vivid >"$T/cam"
}
check "modprobe vivid again" load_vivid
cam=$(cat "$T/cam")
diag "vivid capture node: $cam"
v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true
vm_wait_for "uvc: camera frames again for the same reader" 300 \
	awk -v n=5 -v k=other -v from="$cam_from" "$frames" "$R/reader-cam.log" || true
touch "$T/stop-cam"
timeout 60 tail --pid="$reader" -f /dev/null || true
check "the reader saw the placeholder, then the camera, and no read error" \
	python3 - "$R/reader-cam.log" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
runs = []
for k in (l[1] for l in lines if l[1] in ("white", "card", "other")):
    if not runs or runs[-1][0] != k:
        runs.append([k, 0])
    runs[-1][1] += 1
print("runs:", " ".join(f"{k}x{n}" for k, n in runs))
errors = [" ".join(l) for l in lines if l[1] == "ERROR"]
print(*errors[:1])
sys.exit(0 if not errors and lines[-1][1] == "stop" and
         [k for k, _ in runs] == ["card", "other"] else 1)
PY
check "the daemon is alive" kill -0 "$daemon_pid"
diag "t=${SECONDS}s: done"
