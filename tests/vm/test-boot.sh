#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Smoke test of the VM itself: the kernel modules the other tests need load,
# their device nodes appear, and the environment promised in lib.sh holds.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl

check "guest runs kernel $V4L2CUSE_KVER" test "$(uname -r)" = "$V4L2CUSE_KVER"
check "runs as root" test "$(id -u)" = 0
check "build dir is visible" test -d "$V4L2CUSE_BUILD"

check "vm_modprobe cuse" vm_modprobe cuse
check "/dev/cuse appears" vm_wait_node /dev/cuse 10
check "/dev/cuse is a char device" test -c /dev/cuse

check "vm_modprobe vivid" vm_modprobe vivid n_devs=1 node_types=0x1
# Module init registers the node synchronously, so no wait for sysfs.
if dev=$(vm_find_video 'vivid-000-vid-cap'); then
	ok "vivid created $dev"
	check "$dev appears" vm_wait_node "$dev" 10
	check "v4l2-ctl -d $dev --all (output in vivid-all.txt)" \
		bash -c 'v4l2-ctl -d "$1" --all >"$V4L2CUSE_RESULTS/vivid-all.txt"' _ "$dev"
	check "it is vivid's capture device" grep -q 'Driver name *: vivid' "$V4L2CUSE_RESULTS/vivid-all.txt"
else
	not_ok "vivid created a capture node" "$(ls /sys/class/video4linux 2>&1)"
fi

# Plain modprobe, and the kernel's own module loading, reach the module cache
# through tests/vm/guest-bin/modprobe. Mounting binfmt_misc (a module in
# Debian's kernel) makes the kernel request fs-binfmt_misc.
check "plain modprobe finds the guest's modules" modprobe -n -v fuse
mkdir -p /tmp/autoload
check "kernel module autoloading works (mount -t binfmt_misc)" \
	mount -t binfmt_misc binfmt_misc /tmp/autoload
umount /tmp/autoload 2>/dev/null || true

check "results dir is writable" \
	bash -c 'echo ok >"$V4L2CUSE_RESULTS/probe" && test "$(cat "$V4L2CUSE_RESULTS/probe")" = ok'
check "/tmp is writable" bash -c 'f=$(mktemp) && rm "$f"'
check "HOME=/root, XDG dirs writable" bash -c 'test "$HOME" = /root && touch "$XDG_CACHE_HOME/x"'
