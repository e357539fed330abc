#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Developer entry points (Debian 12):
#
#   tools/dev.sh run [ARGS...]   build, then run the daemon as /dev/video42 with
#                                the test pattern; on a kernel without CUSE, run
#                                a demo in the test VM and save one frame as
#                                ./v4l2cuse-frame.png
#   tools/dev.sh test            build, then run the unit and VM suites, the
#                                unit suite under ASan+UBSan (build-asan) and
#                                a short fuzz run of the parsers (CI)
#
# and their steps: deps (install missing packages), build, build-asan (the
# ASan+UBSan daemon of the churn soak), vm-prepare (download the VM kernel,
# build its initramfs), fuzz (the fuzz run alone).
set -euo pipefail

# Everything building, testing and the test VM need. One list: extend it here.
DEV_PACKAGES=(
	# build
	gcc libc6-dev meson ninja-build pkg-config
	libfuse3-dev libglib2.0-dev libv4l-dev libjpeg62-turbo-dev libyuv-dev libpng-dev libsystemd-dev
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev	# file source: -Dgstreamer (CI: on)
	libpipewire-0.3-dev				# v4l2cuse-pipewire: -Dpipewire (CI: on)
	clang							# fuzzing (build-fuzz)
	python3
	# clients the tests drive
	v4l-utils ffmpeg gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
	procps iproute2
	usbip udev					# usbip list/attach, by-id links (tests/vm/test-usb.sh)
	python3-opencv mpv chromium util-linux		# apps under v4l2cuse-run (tests/vm/test-shim*.sh)
	pipewire pipewire-bin wireplumber dbus-daemon jq	# PipeWire in the VM (tests/vm/test-pipewire.sh)
	gstreamer1.0-pipewire gstreamer1.0-plugins-base-apps
	gstreamer1.0-plugins-bad				# srtsrc/srtsink, openh264 (tests/vm/test-netsrc.sh)
	python3-gi gir1.2-gst-rtsp-server-1.0		# its RTSP, SRT and HTTP servers
	# the test VM (tests/vm/vm-run.sh)
	qemu-system-x86 busybox-static kmod cpio xz-utils
)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
build_dir=build		# inside the checkout: the VM sees the host root, but not its /tmp
# The sanitizer builds: build dirs of their own, instrumented by meson's
# b_sanitize (meson.build). build-asan is also the dir for the unit suite
# under ASan (README); the vm suite takes its daemon (tests/vm/meson.build).
asan_dir=build-asan
fuzz_dir=build-fuzz

say()
{
	echo "dev.sh: $*"
}

as_root()
{
	if ((EUID == 0)); then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "dev.sh: error: need root (or sudo) for: $*" >&2
		exit 1
	fi
}

cmd_deps()
{
	local p installed missing=()
	# One dpkg-query for all (unknown names just print nothing).
	installed=" $(dpkg-query -W -f='${Package}:${db:Status-Status} ' "${DEV_PACKAGES[@]}" 2>/dev/null) " || true
	for p in "${DEV_PACKAGES[@]}"; do
		[[ $installed == *" $p:installed "* ]] || missing+=("$p")
	done
	((${#missing[@]} > 0)) || return 0
	say "installing ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Prints the vm-tests and pipewire options of an existing build dir
# ("enabled enabled"); fails if unusable.
vm_tests_option()
{
	meson introspect "$build_dir" --buildoptions 2>/dev/null |
		python3 -c 'import json, sys
o = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(o["vm-tests"], o.get("pipewire", "missing"))'
}

cmd_build()
{
	local opt
	cd "$root"
	if [[ -f $build_dir/meson-private/coredata.dat ]]; then
		if ! opt=$(vm_tests_option); then
			say "$build_dir is unusable (older meson?); setting it up again"
			meson setup --wipe "$build_dir" -Dvm-tests=enabled -Dgstreamer=enabled -Dpipewire=enabled
		elif [[ $opt != "enabled enabled" ]]; then
			# --reconfigure: an option added since the dir was set up is new to it.
			meson setup --reconfigure "$build_dir" -Dvm-tests=enabled -Dgstreamer=enabled \
				-Dpipewire=enabled
		fi
	else
		meson setup "$build_dir" -Dvm-tests=enabled -Dgstreamer=enabled -Dpipewire=enabled
	fi
	ninja -C "$build_dir"
}

# The ASan+UBSan daemon for the vm suite's churn soak (tests/vm/test-churn.sh):
# only daemon/v4l2cuse of build-asan, not the whole tree. A build dir with
# the vm suite runs it (tests/vm/meson.build: a dependency of vm-churn), so
# it installs nothing: the packages of `build` are enough. GStreamer and
# PipeWire as in build/, so the unit suite under the sanitizers (`test`)
# runs the same tests.
cmd_build_asan()
{
	cd "$root"
	[[ -f $asan_dir/meson-private/coredata.dat ]] ||
		meson setup "$asan_dir" -Db_sanitize=address,undefined -Dgstreamer=enabled \
			-Dpipewire=enabled
	ninja -C "$asan_dir" daemon/v4l2cuse
}

# The libFuzzer harnesses (tests/fuzz/) need clang: their own build dir, the
# project's libraries instrumented for coverage, ASan and UBSan (b_lundef:
# clang's sanitizer runtimes are linked into executables only).
# `meson test` builds just what the 'fuzz' suite runs (every fuzz-* harness
# in tests/fuzz/meson.build), then runs each on its checked-in corpus for 20 s
# (FUZZ_SECONDS, default 20), one after the other.
cmd_fuzz()
{
	cd "$root"
	[[ -f $fuzz_dir/meson-private/coredata.dat ]] ||
		CC=clang meson setup "$fuzz_dir" -Dfuzzing=enabled -Db_sanitize=address,undefined \
			-Db_lundef=false -Dgstreamer=disabled
	meson test -C "$fuzz_dir" --print-errorlogs --suite fuzz
}

cmd_vm_prepare()
{
	"$root/tests/vm/vm-run.sh" --prepare
}

cmd_test()
{
	local start=$SECONDS rc=0
	cmd_deps
	cmd_build			# with vm-tests: build-asan's daemon too
	cmd_vm_prepare			# the download happens before any test starts
	cd "$root"
	meson test -C "$build_dir" --print-errorlogs --suite unit --suite vm || rc=$?
	# The unit suite again under ASan and UBSan: meson test builds the rest
	# of build-asan first (its daemon is there already, for vm-churn).
	cmd_build_asan
	meson test -C "$asan_dir" --print-errorlogs --suite unit || rc=$?
	cmd_fuzz || rc=$?
	say "total wall time $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s (status $rc)"
	return "$rc"
}

have_cuse()
{
	[[ -e /dev/cuse ]] && return 0
	modprobe cuse 2>/dev/null && [[ -e /dev/cuse ]]
}

cmd_run()
{
	local caller_dir=$PWD png rc=0
	cmd_deps
	cmd_build
	cd "$root"
	if have_cuse; then
		[[ -w /dev/cuse ]] || say "warning: /dev/cuse is not writable for you; run as root"
		exec "$build_dir/daemon/v4l2cuse" --device video42 --source pattern "$@"
	fi
	echo "v4l2cuse: this kernel ($(uname -r)) has no CUSE (/dev/cuse missing, modprobe cuse failed);" \
		"running the demo inside the test VM instead"
	V4L2CUSE_BUILD="$root/$build_dir" "$root/tests/vm/vm-run.sh" "$root/tests/vm/demo.sh" || rc=$?
	png="$root/$build_dir/vm-results/demo/frame.png"
	if ((rc != 0)) || [[ ! -f $png ]]; then
		echo "v4l2cuse: the demo failed (status $rc); logs in $build_dir/vm-results/demo/" >&2
		return $((rc == 0 ? 1 : rc))
	fi
	cp "$png" "$caller_dir/v4l2cuse-frame.png"
	echo "v4l2cuse: one frame from /dev/video42 (in the VM) saved as $caller_dir/v4l2cuse-frame.png"
}

usage()
{
	cat <<'EOF'
Usage: tools/dev.sh COMMAND [ARGS...]

The developer entry points of v4l2cuse, on Debian 12. Each command first
installs the Debian packages it needs that are missing (that needs root or
sudo), then does its job.

Commands:
  run [ARGS...]  Build, then run the daemon in the foreground as /dev/video42
                 with the test pattern; ARGS go to the daemon. On a kernel
                 without CUSE it runs the same demo inside the test VM and
                 saves one frame as ./v4l2cuse-frame.png.
  test           Build, then run every suite: the unit tests, the VM tests
                 (each boots Debian's kernel under qemu), the unit tests again
                 under ASan and UBSan (build-asan/) and a short fuzz run of
                 every parser. This is what CI runs.
  deps           Only install the missing packages.
  build          Install what is missing and build into build/, and the
                 daemon of build-asan/ (the vm suite needs it).
  build-asan     Only build the daemon with ASan and UBSan into build-asan/
                 (the vm suite's churn soak runs it).
  vm-prepare     Download the VM's kernel and build its initramfs (once).
  fuzz           Build the fuzz harnesses with clang, ASan and UBSan into
                 build-fuzz/ and run each for FUZZ_SECONDS (default 30) seconds.
  help           Print this text.
EOF
}

case ${1:-} in
run) shift; cmd_run "$@" ;;
test) cmd_test ;;
deps) cmd_deps ;;
build) cmd_deps; cmd_build ;;
build-asan) cmd_build_asan ;;
vm-prepare) cmd_vm_prepare ;;
fuzz) cmd_deps; cmd_fuzz ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
