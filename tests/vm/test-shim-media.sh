#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ffmpeg and GStreamer through the preload shim (v4l2cuse-run), against the
# real Debian packages: ffmpeg YUYV and MJPEG (and -use_libv4l2 where the
# ffmpeg build has it), v4l2src io-mode=mmap, io-mode=userptr and io-mode=rw
# (read(), emulated by the shim over its fast path), and without
# the shim GStreamer's auto mode still works (read()) while ffmpeg fails;
# every capture's pixels are the pattern's colour bars.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl gst-launch-1.0 ffmpeg python3 || bail_out "tools missing"

check_frames=$V4L2CUSE_SRC/tests/vm/check-frames.py
dev=/dev/video42
W=320
H=240
FRAME=$((W * H * 2))

vm_modprobe cuse
vm_wait_node /dev/cuse 10

vm_start_daemon video42 -- --device video42 --source pattern --size ${W}x$H

# --- ffmpeg ---------------------------------------------------------------------

# bars_rgb FILE W H: raw RGB24 frame, 75% bars within +-12 on a row below the overlay.
bars_rgb()
{
	python3 - "$@" <<'PY'
import sys
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()[-w * h * 3:]
want = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
        (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]
row, bad = h * 3 // 4, 0
for i, wv in enumerate(want):
    x = (2 * i + 1) * w // 16
    o = (row * w + x) * 3
    got = tuple(data[o:o + 3])
    ok = all(abs(g - v) <= 12 for g, v in zip(got, wv))
    bad += not ok
    print(f"bar {i}: RGB {got}, want {wv}{'' if ok else '  MISMATCH'}")
sys.exit(1 if bad else 0)
PY
}

ffgrab()
{
	local tag=$1
	shift
	timeout 180 "$run" ffmpeg -hide_banner -loglevel error -y -f v4l2 "$@" \
		-video_size ${W}x$H -i $dev -frames:v 30 -pix_fmt rgb24 -f rawvideo "$R/ff-$tag.rgb"
	[[ $(stat -c %s "$R/ff-$tag.rgb") == $((30 * W * H * 3)) ]]
	bars_rgb "$R/ff-$tag.rgb" $W $H
}
check "ffmpeg YUYV, 30 frames, bars" ffgrab yuyv -input_format yuyv422
check "ffmpeg MJPEG, 30 frames, bars" ffgrab mjpeg -input_format mjpeg
# libv4l2 opens, maps and closes with raw syscall(). Debian's ffmpeg is built
# without libv4l2 (-use_libv4l2 says so); test-shim.sh runs v4l2-ctl -w.
ff_libv4l2=$(ffmpeg -hide_banner -loglevel error -f v4l2 -use_libv4l2 1 -i /dev/null 2>&1 || true)
if grep -q 'not built with libv4l2' <<<"$ff_libv4l2"; then
	diag "this ffmpeg has no libv4l2 support: -use_libv4l2 cannot be tested (test-shim.sh covers libv4l2 with v4l2-ctl -w)"
else
	check "ffmpeg -use_libv4l2 1 (raw syscalls), 30 frames, bars" ffgrab libv4l2 -use_libv4l2 1 -input_format yuyv422
fi
check "ffmpeg without the shim fails: no STREAMING on a plain handle" bash -c \
	"! timeout 60 ffmpeg -hide_banner -loglevel error -f v4l2 -i $dev -frames:v 1 -f null - 2>'$R/ff-plain.log';
	 r=\$?; cat '$R/ff-plain.log'; [[ \$r == 0 ]]"

# --- GStreamer ------------------------------------------------------------------

# io-mode=userptr imports downstream memory: it needs an element that offers
# a buffer pool (a converting videoconvert does); the I420 round trip keeps
# the bars' values.
gst()
{
	local mode=$1 out=$R/gst-$1.yuyv pool=
	shift
	[[ $mode != userptr ]] ||
		pool="! videoconvert ! video/x-raw,format=I420 ! videoconvert ! video/x-raw,format=YUY2"
	# shellcheck disable=SC2086
	timeout 180 "$@" gst-launch-1.0 -q v4l2src device=$dev io-mode=$mode num-buffers=30 \
		! video/x-raw,format=YUY2,width=$W,height=$H $pool \
		! multifilesink location="$out.%d" max-files=1
	python3 "$check_frames" "$out.29" $W $H --frames 1 --bars75
}
check "gst-launch v4l2src io-mode=mmap under the shim" gst mmap "$run"
check "gst-launch v4l2src io-mode=userptr under the shim" gst userptr "$run"
check "gst-launch v4l2src io-mode=rw under the shim (read() emulated by the shim)" gst rw "$run"
# A plain handle cannot stream (no STREAMING; REQBUFS, which GStreamer only
# probes, is ENOTTY), so a pipeline that runs without the shim used read().
check "gst-launch v4l2src io-mode=auto without the shim uses read()" gst auto env
check "daemon alive" kill -0 "$daemon_pid"
