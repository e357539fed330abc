#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The `tools/dev.sh run` demo for machines whose kernel has no CUSE: start the
# daemon with the test pattern inside the VM, show the device, grab one frame
# and convert it to $V4L2CUSE_RESULTS/frame.png (dev.sh copies it out).
#
# The frame is grabbed with plain read() (dd), the only I/O the device offers
# to clients without the preload shim. `v4l2-ctl --stream-to` is no use here:
# v4l2-ctl 1.22 only streams with --stream-mmap/--stream-user (REQBUFS), and
# without either option it silently grabs nothing (checked against vivid).
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

name=video42
node=/dev/$name
daemon=$V4L2CUSE_BUILD/daemon/v4l2cuse
out=$V4L2CUSE_RESULTS
pid=

stop_daemon()
{
	local i status=0
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		not_ok "the daemon exits within 5 s of SIGTERM"
	fi
	wait "$pid" || status=$?
	pid=
	if ((status == 0)); then
		ok "the daemon exited with status 0 after SIGTERM"
	else
		not_ok "the daemon exited with status 0 after SIGTERM" "status $status; log: $out/daemon.log"
	fi
}

[[ -x $daemon ]] || bail_out "$daemon is not built yet (ninja -C build)"
vm_require v4l2-ctl ffmpeg dd || bail_out "tools missing"

vm_modprobe cuse || bail_out "modprobe cuse failed"
vm_wait_node /dev/cuse 10 || bail_out "/dev/cuse did not appear"

diag "starting: ${daemon#"$V4L2CUSE_SRC"/} --device $name --source pattern"
"$daemon" --device "$name" --source pattern >"$out/daemon.log" 2>&1 &
pid=$!
vm_on_exit stop_daemon

for ((i = 0; i < 200; i++)); do
	[[ ! -e $node ]] || break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [[ ! -e $node ]]; then
	sed 's/^/daemon: /' "$out/daemon.log"
	bail_out "$node did not appear within 20 s (daemon $(kill -0 "$pid" 2>/dev/null && echo running || echo exited))"
fi
ok "$node appeared"

check "v4l2-ctl -d $node --all" v4l2-ctl -d "$node" --all

# The frame geometry comes from G_FMT, so the demo follows the daemon's default.
fmt=$(v4l2-ctl -d "$node" --get-fmt-video 2>&1) || true
width=$(sed -n 's|.*Width/Height *: *\([0-9]*\)/.*|\1|p' <<<"$fmt")
height=$(sed -n 's|.*Width/Height *: *[0-9]*/\([0-9]*\).*|\1|p' <<<"$fmt")
size=$(sed -n 's|.*Size Image *: *\([0-9]*\).*|\1|p' <<<"$fmt")
pixfmt=$(sed -n "s|.*Pixel Format *: *'\([^']*\)'.*|\1|p" <<<"$fmt")
: "${width:=640}" "${height:=480}" "${pixfmt:=YUYV}"
: "${size:=$((width * height * 2))}"
diag "format: ${width}x${height} $pixfmt, $size bytes per frame"
[[ $pixfmt == YUYV ]] || bail_out "the demo converts YUYV only, the device gives $pixfmt"

# One read() of sizeimage bytes returns exactly one frame.
check "read one frame from $node" \
	timeout 30 dd if="$node" of="$out/frame.yuyv" bs="$size" count=1 iflag=fullblock status=none
check "the frame has $size bytes" test "$(stat -c %s "$out/frame.yuyv" 2>/dev/null)" = "$size"
check "convert the frame to PNG" \
	ffmpeg -hide_banner -loglevel error -y -f rawvideo -pix_fmt yuyv422 \
	-s "${width}x$height" -i "$out/frame.yuyv" -frames:v 1 "$out/frame.png"

stop_daemon
diag "daemon log:"
sed 's/^/#   /' "$out/daemon.log"
