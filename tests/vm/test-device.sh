#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The first device: /dev/video42 from the test pattern, its permissions,
# v4l2-ctl, three frames over read() with colour-bar values, the clear
# errors (no CUSE, name taken), and a clean SIGTERM.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl python3

log=$V4L2CUSE_RESULTS/daemon.log

# expect_fail DESC PATTERN CMD...: CMD exits non-zero and its stderr matches
# PATTERN (one clear line). Still running after 120 s is a hang (these take
# a second or two under TCG).
expect_fail()
{
	local desc=$1 pattern=$2 out rc
	shift 2
	set +e
	out=$(timeout 120 "$@" 2>&1 >/dev/null)
	rc=$?
	set -e
	if ((rc != 0 && rc != 124)) && grep -qE -e "$pattern" <<<"$out"; then
		ok "$desc (exit $rc: $out)"
	else
		not_ok "$desc" "exit status $rc" "output: $out"
	fi
}

# 1. No /dev/cuse yet: one line naming the cause and the fix.
expect_fail "no /dev/cuse: clear error" "/dev/cuse.*modprobe cuse" "$daemon" --device video42

check "load cuse" vm_modprobe cuse
vm_wait_node /dev/cuse 10

# 2. Bad command-line values: usage errors naming the option.
expect_fail "unknown source" "--source.*unknown source" "$daemon" --source nosuchsource
expect_fail "size 0x0" "--size" "$daemon" --size 0x0
expect_fail "fps 0" "--fps" "$daemon" --fps 0
expect_fail "bad device name" "--device" "$daemon" --device foo

# 3. The device.
"$daemon" --device video42 --source pattern >"$log" 2>&1 &
pid=$!
vm_on_exit kill "$pid"
if ! vm_wait_node /dev/video42 20; then
	bail_out "/dev/video42 did not appear: $(cat "$log")"
fi
ok "/dev/video42 appears"
# The daemon sets its own permissions (no udev in the VM): 0660 root:video,
# a moment after the kernel made the node (0600 root:root).
end=$((SECONDS + 60))
while perm=$(stat -c '%F %a %U %G' /dev/video42) &&
	[[ $perm != "character special file 660 root video" ]] && ((SECONDS < end)); do
	sleep 0.2
done
if [[ $perm == "character special file 660 root video" ]]; then
	ok "node permissions: $perm"
else
	not_ok "node permissions are 0660 root:video" "got: $perm"
fi

check "v4l2-ctl --all" bash -c "v4l2-ctl -d /dev/video42 --all | tee '$V4L2CUSE_RESULTS/all.txt'"
check "driver name is v4l2cuse" grep -q "Driver name *: v4l2cuse" "$V4L2CUSE_RESULTS/all.txt"
check "bus info" grep -q "Bus info *: platform:v4l2cuse-042" "$V4L2CUSE_RESULTS/all.txt"
check "640x480 YUYV by default" grep -q "Width/Height *: 640/480" "$V4L2CUSE_RESULTS/all.txt"

# v4l2cuse-ctl reaches a --device daemon (no other one holds the socket),
# which refuses what needs a configuration.
for _ in $(seq 100); do
	"$ctl" list 2>/dev/null | grep -qE '^video42 +video42 +serving' && break
	sleep 0.2
done
check "v4l2cuse-ctl list reaches the --device daemon" \
	bash -c "'$ctl' list | grep -qE '^video42 +video42 +serving'"
check "v4l2cuse-ctl add is refused, naming the command line" bash -c "
	out=\$('$ctl' add extra node=video43 2>&1); rc=\$?
	[[ \$rc == 1 && \$out == *'command line (--device)'* ]]"

# Three frames by read(): exact size, bar values, only the overlay changes.
check "read three frames: size, 75% bar values, only the overlay changes" \
	python3 "$V4L2CUSE_SRC/tests/vm/check-frames.py" /dev/video42 640 480 \
	--frames 3 --bars75 --overlay-rows 72 --save "$V4L2CUSE_RESULTS/frame.yuyv"

# v4l2-ctl 1.22 streams only with --stream-mmap/--stream-user (the shim's
# job); read() streaming is checked with our own reader above and below.
check "30 more frames by read(), each exactly sizeimage" \
	python3 "$V4L2CUSE_SRC/tests/vm/check-frames.py" /dev/video42 640 480 --frames 30

# 4. A second daemon for video42: refused by the name check, and, with the
# check skipped, CUSE's silent abort is detected too.
expect_fail "second daemon: name taken (precheck)" "already taken" "$daemon" --device video42
expect_fail "second daemon: name taken (CUSE abort detected)" "already taken" \
	env V4L2CUSE_TEST_SKIP_NAME_CHECK=1 "$daemon" --device video42
check "the first daemon still serves" v4l2-ctl -d /dev/video42 --info
check "v4l2cuse-ctl still reaches the first daemon" \
	bash -c "'$ctl' list | grep -qE '^video42 +video42 +serving'"

# 5. SIGTERM: clean exit, the node disappears.
vm_term_check "daemon exits 0 on SIGTERM" "$pid" 10
gone=no
for _ in $(seq 50); do
	[[ -e /dev/video42 ]] || { gone=yes; break; }
	sleep 0.1
done
if [[ $gone == yes ]]; then ok "the node disappears"; else not_ok "the node disappears"; fi
check "the control socket is gone" bash -c "[[ ! -e /run/v4l2cuse/control.sock ]]"
diag "daemon log:"
sed 's/^/#   /' "$log"
