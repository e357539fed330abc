#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# PID 1 of the test VM after switch_root (see initramfs-init.sh). Runs on the
# host's root filesystem, read-only, with the run's results directory mounted
# writable at $V4L2CUSE_RESULTS. Runs the test script, keeps its log and exit
# status in the results directory, then powers the VM off.
#
# Files in $V4L2CUSE_RESULTS written here (vm-run.sh reads them):
#   script.log     the script's stdout and stderr
#   dmesg.log      the guest kernel log at the end of the run
#   .vm/status     the script's exit status (missing: the guest broke down)

set -u

vm_poweroff()
{
	sync
	busybox poweroff -f 2>/dev/null
	echo o >/proc/sysrq-trigger
	sleep 10
	exit 1			# PID 1 exiting panics; panic=-1 and -no-reboot stop qemu
}

vmdir="$V4L2CUSE_RESULTS/.vm"
timeout_s=$VM_SCRIPT_TIMEOUT
script=$VM_SCRIPT
unset VM_SCRIPT VM_SCRIPT_TIMEOUT VM_TMPFS_VAR_TMP
mapfile -d '' -t args <"$vmdir/args"

# A sane environment for the test script: the host's tools, writable scratch
# space on tmpfs (/tmp, /run, /dev/shm, /var/tmp; the rest is read-only).
# Every exec costs ~0.1-0.3 s under TCG, hence the few, batched commands.
export PATH=$V4L2CUSE_SRC/tests/vm/guest-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LANG=C.UTF-8 TERM=dumb
export XDG_RUNTIME_DIR=/run/user/0 XDG_CACHE_HOME=/tmp/.cache
export XDG_CONFIG_HOME=/tmp/.config XDG_DATA_HOME=/tmp/.local/share XDG_STATE_HOME=/tmp/.local/state
umask 077
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" \
	"$XDG_STATE_HOME" /run/v4l2cuse-vm
umask 022
ip link set lo up 2>/dev/null

# Plain `modprobe` (guest-bin/ is first on PATH) and the kernel's module
# autoloading use the module cache too.
declare -p V4L2CUSE_MODDIR V4L2CUSE_KVER >/run/v4l2cuse-vm/env
echo "$V4L2CUSE_SRC/tests/vm/guest-bin/modprobe" >/proc/sys/kernel/modprobe

cd "$V4L2CUSE_SRC" || vm_poweroff
echo "vm: kernel $V4L2CUSE_KVER, running ${script#"$V4L2CUSE_SRC"/} ${args[*]}"

# The script gets no console input. timeout stops it before vm-run.sh's hard
# limit kills the whole VM, so its log and status still make it out.
if [[ -x $script ]]; then
	cmd=("$script" "${args[@]}")
else
	cmd=(bash "$script" "${args[@]}")
fi
run_script()
{
	local tpid rc=0
	timeout -k 10 "$timeout_s" "${cmd[@]}" </dev/null 2>&1 &
	tpid=$!
	wait "$tpid" || rc=$?
	# timeout made itself a process group leader. Background processes the
	# script left running would hold the log pipe open forever: stop them.
	if kill -0 -- "-$tpid" 2>/dev/null; then
		echo "vm: stopping what ${script##*/} left running:" \
			"$(ps -e -o pgid=,pid=,args= 2>/dev/null | awk -v g="$tpid" '$1 == g { $1 = ""; printf "%s;", $0 }')"
		kill -TERM -- "-$tpid" 2>/dev/null
		sleep 1
		kill -KILL -- "-$tpid" 2>/dev/null
	fi
	return "$rc"
}
run_script | tee "$V4L2CUSE_RESULTS/script.log"
status=${PIPESTATUS[0]}
if ((status == 124 || status == 137)); then
	echo "vm: ${script##*/} timed out after ${timeout_s}s and was killed (status $status)"
fi

kmsg=$(dmesg 2>&1)
echo "$kmsg" >"$V4L2CUSE_RESULTS/dmesg.log"
if [[ $kmsg =~ BUG:|WARNING:\ CPU|Oops|general\ protection\ fault|Call\ Trace ]]; then
	echo "vm: note: the guest kernel logged a BUG/WARNING/Oops; see dmesg.log in the results"
fi
echo "$status" >"$vmdir/status"
echo "vm: ${script##*/} exited with status $status"
vm_poweroff
