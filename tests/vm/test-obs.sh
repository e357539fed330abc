#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# OBS Studio's "Start Virtual Camera" into a loopback device, end to end:
# OBS (Debian 12's obs-studio 29) under Xvfb, started as a user starts it
# for a virtual camera (`v4l2cuse-run --loopback-compat obs
# --startvirtualcam`), with a scene that is one blue colour source at
# 320x240 and 10 fps. OBS finds the loopback's writer node by its own probe
# (the first /dev/video* with VIDEO_OUTPUT), writes YUYV frames, and a
# reader of the device's capture node gets them: whole frames of OBS's blue
# (BT.709 limited range, OBS's default), the writer named in
# `v4l2cuse-ctl list`. Stopping OBS leaves the reader streaming the
# placeholder (SIGNAL lost), never an error.
#
# Not in the vm suite: OBS starts in 1-3 minutes under TCG, which the CI
# run's hour does not carry next to the rest, and it needs obs-studio and
# xvfb, which `tools/dev.sh deps` does not install (apt-get install
# obs-studio xvfb). Run it with
#   V4L2CUSE_VM_MEM=3072 tests/vm/vm-run.sh tests/vm/test-obs.sh
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

client=$V4L2CUSE_BUILD/tests/vm/share-client
T=$(mktemp -d)

vm_require obs Xvfb || bail_out "missing programs (apt-get install obs-studio xvfb)"
vm_modprobe cuse
vm_wait_node /dev/cuse 10

# The writer node's number is below every other /dev/video*: OBS takes the
# first node in versionsort order that passes its probe (the capture node
# does not: no VIDEO_OUTPUT).
cat >"$T/v4l2cuse.conf" <<'CONF'
[device obs]
node = video51
label = OBS reader
source = loopback:video50,sizes=320x240,fps=10,timeout=2000,compat=1
size = 320x240
format = YUYV
frame-rate = 10
min-buffers = 6
CONF
vm_start_daemon video50 video51 -- --config "$T/v4l2cuse.conf"

# OBS's configuration: no first-run wizard, one profile of 320x240 at 10 fps
# (Rec. 709, partial range: OBS's defaults, written out), one scene of a
# blue colour source (OBS stores colours as 0xAABBGGRR).
home=$T/home
conf=$home/.config/obs-studio
mkdir -p "$conf/basic/profiles/vm" "$conf/basic/scenes"
cat >"$conf/global.ini" <<'INI'
[General]
FirstRun=true
EnableAutoUpdates=false
[Basic]
Profile=vm
ProfileDir=vm
SceneCollection=vm
SceneCollectionFile=vm
INI
cat >"$conf/basic/profiles/vm/basic.ini" <<'INI'
[General]
Name=vm
[Video]
BaseCX=320
BaseCY=240
OutputCX=320
OutputCY=240
FPSType=1
FPSInt=10
ColorSpace=709
ColorRange=Partial
INI
cat >"$conf/basic/scenes/vm.json" <<'JSON'
{"name": "vm", "current_scene": "Scene", "current_program_scene": "Scene",
 "scene_order": [{"name": "Scene"}],
 "sources": [
  {"id": "color_source_v3", "versioned_id": "color_source_v3", "name": "Blue",
   "settings": {"color": 4294901760, "width": 320, "height": 240}},
  {"id": "scene", "versioned_id": "scene", "name": "Scene",
   "settings": {"id_counter": 1, "items": [{"name": "Blue", "id": 1, "visible": true,
     "pos": {"x": 0.0, "y": 0.0}, "scale": {"x": 1.0, "y": 1.0}, "rot": 0.0,
     "align": 5, "bounds_type": 0}]}}
 ]}
JSON

Xvfb :77 -screen 0 1024x768x24 -nolisten tcp >"$R/xvfb.log" 2>&1 &
xvfb=$!
vm_on_exit kill "$xvfb"
vm_wait_for "Xvfb runs" 30 test -e /tmp/.X11-unix/X77 || bail_out "Xvfb did not start: $(tail -3 "$R/xvfb.log")"

t0=$SECONDS
# softpipe: under TCG OBS dies of a SIGSEGV in llvmpipe's JIT code as soon
# as its virtual camera renders (measured: with v4l2loopback's own module and
# no v4l2cuse as well); softpipe has no JIT.
HOME=$home XDG_CONFIG_HOME=$home/.config DISPLAY=:77 GALLIUM_DRIVER=softpipe setsid "$run" --loopback-compat \
	obs --startvirtualcam --disable-shutdown-check --disable-updater --multi \
	>"$R/obs.log" 2>&1 &
obs=$!
vm_on_exit kill -KILL -- "-$obs"
# Measured: 'Virtual camera started' 57-150 s after the start; 1200 s is
# a hang detector.
until grep -q 'Virtual camera started\|Failed to start virtual camera' "$R/obs.log" ||
	! kill -0 "$obs" 2>/dev/null || ((SECONDS - t0 > 1200)); do
	sleep 2
done
diag "OBS after $((SECONDS - t0)) s:"
grep -E 'virtual|Virtual|v4l2|error' "$R/obs.log" | sed 's/^/#   /' | head -20
check "OBS starts its virtual camera on the loopback's writer node" \
	grep -q 'Virtual camera started' "$R/obs.log"

# Its first frames take a moment more (softpipe renders under TCG): the
# reader starts once the writer has written.
vm_wait_for "OBS writes frames" 300 bash -c \
	"'$ctl' list 2>&1 | grep -qE 'writer /dev/video50: connected, pid [0-9]+ \\(obs\\), 320x240/YUYV, [1-9][0-9]* written'" || true
check "a reader gets 20 whole frames of OBS's blue scene" \
	timeout 300 "$client" /dev/video51 read 20 0 blue

"$ctl" list >"$R/list-obs.txt" 2>&1 || true
sed 's/^/#   /' "$R/list-obs.txt"
check "v4l2cuse-ctl list names OBS as the writer of 320x240 YUYV, signal ok" bash -c \
	"grep -qE 'writer /dev/video50: connected, pid [0-9]+ \\(obs\\), 320x240/YUYV, [0-9]+ written, 0 refused' '$R/list-obs.txt' &&
	 awk '\$1 == \"obs\" && \$4 == \"ok\" { f = 1 } END { exit !f }' '$R/list-obs.txt'"

# OBS quits (SIGTERM, as a desktop session ends it): the reader goes on.
"$client" /dev/video51 read 0 0 none >"$R/reader-after.txt" 2>&1 &
reader=$!
vm_on_exit kill "$reader"
sleep 2
kill -TERM -- "-$obs" 2>/dev/null || true
end=$((SECONDS + 120))
while kill -0 "$obs" 2>/dev/null && ((SECONDS < end)); do
	sleep 1
done
kill -KILL -- "-$obs" 2>/dev/null || true
wait "$obs" 2>/dev/null || true
vm_wait_for "the writer gone, SIGNAL lost" 60 bash -c \
	"'$ctl' list 2>&1 | awk '\$1 == \"obs\" && \$4 == \"lost\" { f = 1 } END { exit !f }'" || true
sleep 3
kill -TERM "$reader"
st=0
wait "$reader" || st=$?
sed 's/^/#   /' "$R/reader-after.txt"
check "after OBS quits the reader streams on (whole frames, no error)" bash -c \
	"(($st == 0)) && grep -qE 'whole=[1-9]' '$R/reader-after.txt'"

