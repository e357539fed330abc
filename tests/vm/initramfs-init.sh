#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# /init of the test VM's initramfs. tests/vm/vm-run.sh packs it together with
# busybox-static and the modules needed for virtio-9p; the initramfs is cached
# under a hash of this file, so editing it rebuilds the initramfs.
#
# It mounts the host's root read-only (9p tag "hostroot") and the run's writable
# results directory (9p tag "results"), reads the run's parameters from
# results/.vm/env, builds the guest's view (tmpfs /tmp, /run, /dev/shm, ...)
# and switch_roots into tests/vm/guest-init.sh on the host root. switch_root
# (not a chroot in a child) makes the host tree the root of PID 1 and thereby
# of the kernel's usermode helpers, so module autoloading can run a program
# from the host tree (guest-init.sh points it at tests/vm/guest-modprobe.sh).

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin /dev /proc /sys /mnt /results
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
echo			# end the firmware's "Booting from ROM.." line
mount -t proc proc /proc
mount -t sysfs sysfs /sys

die()
{
	echo "vm-init: $*"
	echo "vm-init: giving up, powering off"
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}

# Load order comes from `modprobe --show-depends` at initramfs build time.
for m in $(cat /lib/modules/load-order); do
	insmod "/lib/modules/$m.ko" || die "insmod $m failed"
done

opts=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o "$opts,ro" hostroot /mnt || die "cannot mount the host root (9p tag hostroot)"
mount -t 9p -o "$opts" results /results || die "cannot mount the results export (9p tag results)"
# vm-run.sh's boot watchdog waits for this.
: >/results/.vm/booted

# Written by vm-run.sh: V4L2CUSE_SRC, V4L2CUSE_BUILD, V4L2CUSE_RESULTS, ...
set -a
. /results/.vm/env || die "cannot read results/.vm/env"
set +a

r=/mnt
mount -t devtmpfs devtmpfs "$r/dev" || die "mount $r/dev"
mkdir -p "$r/dev/pts" "$r/dev/shm"
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts "$r/dev/pts" || die "mount devpts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/dev/shm" || die "mount /dev/shm"
mount -t proc proc "$r/proc" || die "mount proc"
mount -t sysfs sysfs "$r/sys" || die "mount sysfs"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/tmp" || die "mount /tmp"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$r/run" || die "mount /run"
if [ "$VM_TMPFS_VAR_TMP" = 1 ]; then
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/var/tmp" || die "mount /var/tmp"
fi

mount -o move /results "$r$V4L2CUSE_RESULTS" || die "move the results export to $V4L2CUSE_RESULTS"

exec switch_root "$r" /bin/bash "$V4L2CUSE_SRC/tests/vm/guest-init.sh"
die "switch_root failed"
