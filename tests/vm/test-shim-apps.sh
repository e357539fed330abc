#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Desktop apps that stream only with mmap, under v4l2cuse-run: OpenCV
# (python3-opencv, CAP_V4L2) reads 10 frames with the pattern's pixels, mpv
# plays 30 frames from av://v4l2:, and headless Chromium captures our camera
# with getUserMedia on a local page (tests/vm/gum.html) that draws a frame
# to a canvas and reports its pixels, which must be the colour bars.
# V4L2CUSE_TEST_SHIM_APPS_PARTS picks the apps (default "opencv mpv
# chromium").
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require python3 mpv chromium || bail_out "tools missing"

dev=/dev/video42
W=320
H=240

vm_modprobe cuse
vm_wait_node /dev/cuse 10
vm_start_daemon video42 -- --device video42 --source pattern --size ${W}x$H \
	--label "v4l2cuse test camera"


# All by default; a subset for repeated runs of one app.
parts=${V4L2CUSE_TEST_SHIM_APPS_PARTS:-opencv mpv chromium}
want_part()
{
	[[ " $parts " == *" $1 "* ]]
}

# --- OpenCV -----------------------------------------------------------------------

# (Importing cv2 maps ~100 MB of libraries over 9p: minutes under TCG.)
want_part opencv && check "OpenCV CAP_V4L2 reads 10 frames with the bars (v4l2cuse-run python3)" \
	timeout 600 "$run" python3 -u - $dev $W $H <<'PY'
import json, os, sys, time
t0 = time.monotonic()
import cv2
print(f"cv2 {cv2.__version__} imported in {time.monotonic() - t0:.0f} s")
dev, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
want = json.loads(os.environ["BARS_RGB"])
c = cv2.VideoCapture(dev, cv2.CAP_V4L2)
assert c.isOpened(), "VideoCapture did not open"
c.set(cv2.CAP_PROP_FRAME_WIDTH, w)
c.set(cv2.CAP_PROP_FRAME_HEIGHT, h)
n = 0
for _ in range(10):
    ok, frame = c.read()
    assert ok and frame is not None, f"read() failed after {n} frames"
    n += 1
c.release()
print(f"{n} frames of {frame.shape}")
assert frame.shape[:2] == (h, w), frame.shape
row, bad = h * 3 // 4, 0
for i, wv in enumerate(want):
    x = (2 * i + 1) * w // 16
    b, g, r = (int(v) for v in frame[row, x])
    ok = all(abs(a - e) <= 12 for a, e in zip((r, g, b), wv))
    bad += not ok
    print(f"bar {i}: RGB {(r, g, b)}, want {tuple(wv)}{'' if ok else '  MISMATCH'}")
sys.exit(1 if bad else 0)
PY

# --- mpv --------------------------------------------------------------------------

want_part mpv && check "mpv av://v4l2:$dev --vo=null --frames=30" \
	timeout 180 "$run" mpv --no-config --really-quiet --vo=null --ao=null --frames=30 \
	"av://v4l2:$dev"

# --- Chromium ---------------------------------------------------------------------

if want_part chromium; then
	check "Chromium (headless) getUserMedia under v4l2cuse-run: canvas shows the bars" \
		vm_chromium_gum v4l2cuse "$run"
fi
check "daemon alive" kill -0 "$daemon_pid"
