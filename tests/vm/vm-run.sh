#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run a script as root inside a throw-away VM whose kernel has CUSE and V4L2.
#
#   tests/vm/vm-run.sh SCRIPT [ARGS...]   boot, run SCRIPT, exit with its status
#   tests/vm/vm-run.sh --prepare          only fill the kernel/initramfs cache
#
# The VM is Debian's stock kernel (linux-image-<ver>-amd64-unsigned, resolved
# from the linux-image-amd64 metapackage) under qemu TCG, with the host's root
# filesystem as its root, read-only over virtio-9p, and one writable 9p export
# for the run's results. tests/vm/lib.sh documents what the script gets.
#
# Environment (all optional):
#   V4L2CUSE_BUILD        meson build dir (default: <checkout>/build)
#   V4L2CUSE_VM_CACHE     kernel + initramfs cache (default /var/cache/v4l2cuse-vm)
#   V4L2CUSE_VM_TIMEOUT   hard limit for the whole VM run in seconds (default 900)
#   V4L2CUSE_VM_KVER      pin the guest kernel release, e.g. 6.1.0-57-amd64
#   V4L2CUSE_VM_MEM       guest memory in MiB (default 2048)
#   V4L2CUSE_VM_SMP       guest vCPUs (default 2)
#   V4L2CUSE_VM_RESULTS   results dir (default <build>/vm-results/<script name>)
#   V4L2CUSE_VM_APPEND    more kernel arguments, e.g. "clocksource=tsc tsc=reliable"
#   V4L2CUSE_VM_BOOT_TIMEOUT  seconds for the guest kernel to reach the init
#                         before it is booted once more (default 240)
#                         (the benchmarks: docs/performance.md)
#   V4L2CUSE_TEST_*       passed through into the VM unchanged
#
# Exit status: the script's, or 99 if the VM could not run it (missing tools,
# no kernel, boot failure, timeout).

set -euo pipefail

vm_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
vm_src=$(cd "$vm_here/../.." && pwd -P)

# Modules the initramfs needs to mount the 9p exports (dependencies resolved
# with modprobe --show-depends at build time, never hard-coded).
VM_INITRD_MODULES=(virtio_pci 9pnet_virtio 9p)
# Bump to force a rebuild of cached initramfs images.
VM_INITRD_FORMAT=1

log()
{
	echo "vm-run: $*"
}

die()
{
	echo "vm-run: error: $*" >&2
	exit 99
}

usage()
{
	sed -n '4,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

# True if the guest covers PATH with its own mounts (tmpfs, devtmpfs, ...).
vm_hidden_path()
{
	case "$1/" in
	/tmp/* | /run/* | /dev/* | /proc/* | /sys/*) return 0 ;;
	esac
	return 1
}

as_root()
{
	if ((EUID == 0)); then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

need_tools()
{
	local t missing=()
	for t in qemu-system-x86_64 busybox modprobe depmod cpio gzip apt-get apt-cache dpkg flock timeout; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	((${#missing[@]} == 0)) || die "missing ${missing[*]}; run tools/dev.sh deps"
}

# --- kernel cache -----------------------------------------------------------

# Sets vm_kver to the release the linux-image-amd64 metapackage depends on.
# apt-cache takes ~1 s, so the answer is remembered until apt's lists change.
resolve_kver()
{
	local stamp memo="$vm_cache/.kver-resolved" line
	vm_kver=${V4L2CUSE_VM_KVER:-}
	[[ -z $vm_kver ]] || return 0
	stamp=$(stat -c '%n %Y %s' /var/lib/apt/lists/*Packages* 2>/dev/null | cksum) || true
	if [[ -f $memo ]]; then
		read -r line <"$memo" || true
		if [[ ${line% *} == "$stamp" ]]; then
			vm_kver=${line##* }
			return 0
		fi
	fi
	vm_kver=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: *<\{0,1\}linux-image-\([0-9][^ >]*-amd64\)>\{0,1\}$/\1/p' |
		head -n 1) || true
	if [[ -n $vm_kver ]]; then
		echo "$stamp $vm_kver" >"$memo.$$"
		mv "$memo.$$" "$memo"
	fi
}

apt_update()
{
	log "updating apt's package lists"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
}

# Download linux-image-KVER-amd64-unsigned and unpack it to $cache/KVER/root.
download_kernel()
{
	local kver=$1 tmp="$vm_cache/.new-$1.$$" pkg="linux-image-$1-unsigned" opts=()
	((EUID != 0)) || opts=(-o APT::Sandbox::User=root)

	if ! apt-cache show "$pkg" >/dev/null 2>&1; then
		log "apt does not know $pkg"
		return 1
	fi
	log "downloading $pkg"
	rm -rf "$tmp"
	mkdir -p "$tmp/deb"
	if ! (cd "$tmp/deb" && apt-get download -q "${opts[@]}" "$pkg"); then
		rm -rf "$tmp"
		return 1
	fi
	log "unpacking $pkg"
	dpkg -x "$tmp"/deb/*.deb "$tmp/root"
	rm -rf "$tmp/deb"
	# kmod here looks in <dir>/lib/modules; newer packages ship usr/lib/modules.
	if [[ ! -d $tmp/root/lib/modules && -d $tmp/root/usr/lib/modules ]]; then
		ln -s usr/lib "$tmp/root/lib"
	fi
	if [[ ! -f $tmp/root/boot/vmlinuz-$kver || ! -d $tmp/root/lib/modules/$kver ]]; then
		rm -rf "$tmp"
		die "$pkg has no boot/vmlinuz-$kver or lib/modules/$kver"
	fi
	depmod -b "$tmp/root" "$kver"
	rm -rf "${vm_cache:?}/$kver"
	mv "$tmp" "$vm_cache/$kver"
	touch "$vm_cache/$kver/.complete"
}

# The bzImage is XZ-compressed, and decompressing it under TCG costs ~6 s per
# boot. Debian builds with CONFIG_PVH=y, so qemu can boot the uncompressed ELF
# vmlinux directly: extract it once (find the compressed payload by its magic,
# keep the first candidate that decompresses to an ELF). Returns 1 if none.
extract_vmlinux()
{
	local kdir=$1 kver=$2 bz off magic tool out
	bz="$kdir/root/boot/vmlinuz-$kver"
	out="$kdir/vmlinux.tmp.$$"
	grep -q '^CONFIG_PVH=y' "$kdir/root/boot/config-$kver" 2>/dev/null || return 1
	for magic in xz:'\xfd7zXZ\x00' gzip:'\x1f\x8b\x08' zstd:'\x28\xb5\x2f\xfd'; do
		tool=${magic%%:*}
		command -v "$tool" >/dev/null || continue
		for off in $(LC_ALL=C grep -aboP "${magic#*:}" "$bz" | cut -d: -f1); do
			tail -c +$((off + 1)) "$bz" | "$tool" -dc 2>/dev/null >"$out" || true
			if [[ $(head -c 4 "$out" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
				mv "$out" "$kdir/vmlinux"
				return 0
			fi
		done
	done
	rm -f "$out"
	return 1
}

# Sets vm_kver and makes sure $cache/$vm_kver is complete.
ensure_kernel()
{
	resolve_kver
	if [[ -n $vm_kver && -f $vm_cache/$vm_kver/.complete ]]; then
		return 0
	fi
	if [[ -z $vm_kver ]] || ! download_kernel "$vm_kver"; then
		# Unknown metapackage, or lists older than the mirror: refresh once.
		if apt_update; then
			resolve_kver
			if [[ -n $vm_kver && ! -f $vm_cache/$vm_kver/.complete ]]; then
				download_kernel "$vm_kver" || vm_kver=
			fi
		else
			vm_kver=
		fi
	fi
	if [[ -z $vm_kver && -n ${V4L2CUSE_VM_KVER:-} ]]; then
		die "cannot download the pinned kernel linux-image-$V4L2CUSE_VM_KVER-unsigned"
	fi
	if [[ -z $vm_kver ]]; then
		# Offline with a stale cache is still good enough to test.
		local newest
		newest=$(find "$vm_cache" -mindepth 2 -maxdepth 2 -name .complete -printf '%T@ %h\n' |
			sort -rn | head -n 1) || true
		[[ -n $newest ]] || die "cannot resolve or download the guest kernel (linux-image-amd64)"
		newest=${newest#* }
		vm_kver=${newest##*/}
		log "warning: using the cached kernel $vm_kver"
	fi
}

# Sets vm_initrd, building it if the inputs changed.
ensure_initrd()
{
	local kdir="$vm_cache/$vm_kver" m kind path rest hash stage
	local -a paths=()
	local -A seen=()

	for m in "${VM_INITRD_MODULES[@]}"; do
		while read -r kind path rest; do
			[[ $kind == insmod && -z ${seen[$path]:-} ]] || continue
			seen[$path]=1
			paths+=("$path")
		done < <(modprobe -C /dev/null -d "$kdir/root" -S "$vm_kver" --show-depends "$m")
	done
	((${#paths[@]} > 0)) || die "modprobe --show-depends found no modules for ${VM_INITRD_MODULES[*]}"

	hash=$({
		echo "format $VM_INITRD_FORMAT"
		printf '%s\n' "${paths[@]##*/}"
		cat "$vm_here/initramfs-init.sh"
		cat "$(command -v busybox)"
	} | sha256sum | cut -c1-16)
	vm_initrd="$kdir/initrd-$hash.gz"
	if [[ -f $vm_initrd ]]; then
		touch "$vm_initrd"	# its mtime is its last use (prune_cache)
		return 0
	fi

	local names=("${paths[@]##*/}")
	log "building the initramfs with ${names[*]%%.ko*}"
	# The initramfs has no libc. ldd fails on static binaries.
	! ldd "$(command -v busybox)" >/dev/null 2>&1 ||
		die "busybox is dynamically linked; install busybox-static"
	stage="$kdir/.initrd.$$"
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,dev,proc,sys,mnt,results,lib/modules}
	cp "$(command -v busybox)" "$stage/bin/busybox"
	cp "$vm_here/initramfs-init.sh" "$stage/init"
	chmod 0755 "$stage/init" "$stage/bin/busybox"
	for path in "${paths[@]}"; do
		m=${path##*/}
		case $m in
		*.ko) cp "$path" "$stage/lib/modules/$m" ;;
		*.ko.xz) xz -dc "$path" >"$stage/lib/modules/${m%.xz}" ;;
		*.ko.zst) zstd -qdc "$path" >"$stage/lib/modules/${m%.zst}" ;;
		*.ko.gz) gzip -dc "$path" >"$stage/lib/modules/${m%.gz}" ;;
		*) die "unexpected module file $path" ;;
		esac
		m=${m%%.ko*}
		echo "$m" >>"$stage/lib/modules/load-order"
	done
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$stage.gz"
	mv "$stage.gz" "$vm_initrd"
	rm -rf "$stage"
}

# Drop kernels (and initramfs images) nobody has booted for two weeks.
prune_cache()
{
	local d
	for d in "$vm_cache"/*/; do
		d=${d%/}
		[[ ${d##*/} != "$vm_kver" && -f $d/.complete ]] || continue
		if [[ -z $(find "$d/.last-used" -mtime -14 2>/dev/null) ]]; then
			log "pruning the unused cached kernel ${d##*/}"
			rm -rf "$d"
		fi
	done
	find "$vm_cache/$vm_kver" -maxdepth 1 -name 'initrd-*.gz' -mtime +14 -delete 2>/dev/null || true
}

prepare()
{
	local fd kdir
	mkdir -p "$vm_cache"
	exec {fd}>>"$vm_cache/.lock"
	if ! flock -n "$fd"; then
		log "waiting for another vm-run.sh to finish filling $vm_cache"
		flock -w 3600 "$fd" || die "timed out waiting for the cache lock"
	fi
	ensure_kernel
	kdir="$vm_cache/$vm_kver"
	ensure_initrd
	vm_kernel="$kdir/root/boot/vmlinuz-$vm_kver"
	if [[ ! -f $kdir/vmlinux && ! -f $kdir/.no-vmlinux ]]; then
		log "extracting vmlinux for a faster (PVH) boot"
		if ! extract_vmlinux "$kdir" "$vm_kver"; then
			log "no PVH-bootable vmlinux in $vm_kernel; booting the bzImage"
			touch "$kdir/.no-vmlinux"
		fi
	fi
	[[ ! -f $kdir/vmlinux ]] || vm_kernel="$kdir/vmlinux"
	vm_moddir="$kdir/root"
	touch "$kdir/.last-used"
	prune_cache
	exec {fd}>&-
}

# --- main -------------------------------------------------------------------

(($# > 0)) || usage 2
case $1 in
-h | --help) usage 0 ;;
esac

need_tools

if [[ -n ${V4L2CUSE_VM_CACHE:-} ]]; then
	vm_cache=$V4L2CUSE_VM_CACHE
elif ((EUID == 0)) || [[ -w /var/cache ]]; then
	vm_cache=/var/cache/v4l2cuse-vm
else
	vm_cache=${XDG_CACHE_HOME:-$HOME/.cache}/v4l2cuse-vm
fi
mkdir -p "$vm_cache"
vm_cache=$(cd "$vm_cache" && pwd -P)
vm_hidden_path "$vm_cache" && die "the cache $vm_cache is hidden inside the VM (tmpfs); set V4L2CUSE_VM_CACHE elsewhere"

if [[ $1 == --prepare ]]; then
	t0=$SECONDS
	prepare
	log "kernel $vm_kver ready in $vm_cache ($((SECONDS - t0)) s)"
	log "  kernel: $vm_kernel"
	log "  initramfs: $vm_initrd"
	exit 0
fi

script=$1
shift
[[ -f $script ]] || die "no such script: $script"
script=$(cd "$(dirname "$script")" && pwd -P)/$(basename "$script")
name=$(basename "$script" .sh)

build=${V4L2CUSE_BUILD:-$vm_src/build}
[[ -d $build ]] || die "build dir $build does not exist; run tools/dev.sh build"
build=$(cd "$build" && pwd -P)
results=${V4L2CUSE_VM_RESULTS:-$build/vm-results/$name}
mkdir -p "$results"
results=$(cd "$results" && pwd -P)
for p in "$vm_src" "$build" "$results" "$script"; do
	vm_hidden_path "$p" && die "$p is hidden inside the VM (the guest mounts tmpfs on /tmp and /run); use a build dir inside the checkout"
done
var_tmp=1
for p in "$vm_src" "$build" "$results" "$script" "$vm_cache"; do
	[[ $p/ != /var/tmp/* ]] || var_tmp=0
done

timeout_s=${V4L2CUSE_VM_TIMEOUT:-900}
[[ $timeout_s =~ ^[0-9]+$ ]] || die "V4L2CUSE_VM_TIMEOUT must be a number of seconds"
# The guest stops the script first, so its log and status still get out.
if ((timeout_s > 120)); then
	inner_s=$((timeout_s - 60))
else
	inner_s=$((timeout_s * 3 / 4))
fi

# Two runs of the same script would share the results dir: take turns. The
# lock is held (also by qemu, which inherits it) until the run ends.
exec {results_lock}>>"$results/../.${results##*/}.lock"
if ! flock -n "$results_lock"; then
	log "waiting for another run of ${script##*/} to release $results"
	flock -w "$((timeout_s + 120))" "$results_lock" || die "timed out waiting for $results"
fi

t0=$SECONDS
prepare
t_prep=$((SECONDS - t0))

# Fresh results dir; .vm/ holds the run's parameters and the exit status.
find "$results" -mindepth 1 -delete
mkdir -p "$results/.vm"
sq()
{
	printf "'%s'" "${1//\'/\'\\\'\'}"
}
{
	echo "V4L2CUSE_SRC=$(sq "$vm_src")"
	echo "V4L2CUSE_BUILD=$(sq "$build")"
	echo "V4L2CUSE_RESULTS=$(sq "$results")"
	echo "V4L2CUSE_KVER=$(sq "$vm_kver")"
	echo "V4L2CUSE_MODDIR=$(sq "$vm_moddir")"
	echo "VM_SCRIPT=$(sq "$script")"
	echo "VM_SCRIPT_TIMEOUT=$inner_s"
	echo "VM_TMPFS_VAR_TMP=$var_tmp"
	while IFS='=' read -r -d '' k v; do
		[[ $k =~ ^V4L2CUSE_TEST_[A-Za-z0-9_]*$ ]] && echo "$k=$(sq "$v")"
	done < <(env -0)
} >"$results/.vm/env"
: >"$results/.vm/args"
(($# == 0)) || printf '%s\0' "$@" >"$results/.vm/args"

qemu=(qemu-system-x86_64
	-machine accel=tcg -cpu max
	-m "${V4L2CUSE_VM_MEM:-2048}" -smp "${V4L2CUSE_VM_SMP:-2}"
	-nographic -no-reboot -nic none
	-kernel "$vm_kernel" -initrd "$vm_initrd"
	-append "console=ttyS0 quiet panic=-1${V4L2CUSE_VM_APPEND:+ $V4L2CUSE_VM_APPEND}"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=${results//,/,,},mount_tag=results,security_model=none")

log "booting kernel $vm_kver for ${script#"$vm_src"/} (timeout ${timeout_s}s)"
t1=$SECONDS
# The host's load while the VM runs, every 5 s, for the guest to read
# (.vm/host-load: "EPOCH LOAD1 LOAD5 LOAD15"): the figures of a benchmark
# mean little without it (the host is shared).
(
	while :; do
		echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/.vm/host-load"
		sleep 5
	done
) &
load_pid=$!
# qemu gets /dev/null as stdin: with stdin closed -nographic fails, and with a
# pipe the guest would read it as keystrokes. The console is streamed with
# terminal escapes (SeaBIOS screen clears) stripped and kept as console.log.
#
# Boot watchdog: the init writes .vm/booted as soon as it has the results
# export. A guest kernel that has not got there in V4L2CUSE_VM_BOOT_TIMEOUT
# (240) s is booted once more. Debian's kernel under TCG with 2 vCPUs has
# hung at boot with RCU stalls ("timer wakeup didn't happen ... cpu=1",
# console.log) on a host at load 16, where a boot takes ~60 s and an idle
# one ~10 s; nothing of ours has run by then, so a second boot hides no
# failure of the code under test. Both boots stay in console.log.
boot_timeout=${V4L2CUSE_VM_BOOT_TIMEOUT:-240}
[[ $boot_timeout =~ ^[0-9]+$ ]] || die "V4L2CUSE_VM_BOOT_TIMEOUT must be a number of seconds"
set +e
for boot in 1 2; do
	rm -f "$results/.vm/booted" "$results/.vm/qemu.pid" "$results/.vm/qemu-status"
	t_boot=$SECONDS
	{
		timeout -k 10 "$timeout_s" "${qemu[@]}" -pidfile "$results/.vm/qemu.pid" </dev/null 2>&1 |
			sed -u -e 's/\x1bc/\n/g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' \
				-e 's/\x1b[()][0-9A-Za-z]//g' -e 's/\x1b[^[()]//g' -e 's/\x1b//g' \
				-e 's/\r//g' |
			tee -a "$results/console.log"
		echo "${PIPESTATUS[0]}" >"$results/.vm/qemu-status"
	} &
	vm_job=$!
	hung=0
	while kill -0 "$vm_job" 2>/dev/null && [[ ! -e $results/.vm/booted ]]; do
		if ((SECONDS - t_boot >= boot_timeout)); then
			hung=1
			kill "$(<"$results/.vm/qemu.pid")" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$vm_job"
	qemu_rc=$(<"$results/.vm/qemu-status")
	((hung)) || break
	log "boot $boot: the guest kernel did not reach the init in ${boot_timeout}s (V4L2CUSE_VM_BOOT_TIMEOUT); see $results/console.log"
	echo "vm-run: boot $boot hung before the init; killed" >>"$results/console.log"
done
kill "$load_pid" 2>/dev/null
wait "$load_pid" 2>/dev/null
set -e
t_vm=$((SECONDS - t1))

if ((hung)); then
	echo "vm-run: error: the guest kernel did not reach the init in ${boot_timeout}s, twice;" \
		"see $results/console.log" >&2
	exit 99
fi

if ((qemu_rc == 124 || qemu_rc == 137)); then
	echo "vm-run: error: TIMEOUT: killed the VM after ${timeout_s}s (V4L2CUSE_VM_TIMEOUT); results in $results" >&2
	exit 99
fi
if [[ ! -s $results/.vm/status ]]; then
	echo "vm-run: error: the VM ended (qemu status $qemu_rc) without the script's exit status:" \
		"it did not boot or crashed; see $results/console.log" >&2
	exit 99
fi
status=$(<"$results/.vm/status")
log "${script##*/}: exit status $status; prepare ${t_prep}s, VM ${t_vm}s; results in $results"
exit "$status"
