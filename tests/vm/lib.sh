# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Helpers for scripts that tests/vm/vm-run.sh runs inside the test VM.
# Source it after `set -euo pipefail`:
#
#	. "$V4L2CUSE_SRC/tests/vm/lib.sh"
#
# Set here: daemon, ctl and run (the built v4l2cuse, v4l2cuse-ctl and
# v4l2cuse-run) and R (V4L2CUSE_RESULTS).
#
# Environment set by the VM (all absolute paths, the same inside and outside):
#	V4L2CUSE_SRC      checkout root (read-only in the VM; also the cwd)
#	V4L2CUSE_BUILD    meson build directory (read-only in the VM)
#	V4L2CUSE_RESULTS  writable directory for this script's artefacts, kept
#	                  on the host as <build>/vm-results/<script name>/
#	V4L2CUSE_KVER     guest kernel release (uname -r)
#	V4L2CUSE_MODDIR   module cache root, the -d argument of modprobe
#	V4L2CUSE_TEST_*   passed through from the environment of vm-run.sh
# The host's load average while the VM runs: vm_host_load.
# Scratch space: /tmp, /run, /dev/shm, /var/tmp are tmpfs. HOME=/root is
# read-only; XDG_*_HOME point into /tmp.
#
# TAP-style checks: every ok/not_ok/check prints "ok N - ..." or
# "not ok N - ...", and when the script exits the plan "1..N" follows. The
# script's exit status becomes 1 if any check failed (or stays the status it
# died with). Register cleanups (stop daemons) with vm_on_exit, not trap EXIT.

if [[ -z ${V4L2CUSE_RESULTS:-} || -z ${V4L2CUSE_MODDIR:-} ]]; then
	echo "lib.sh: not inside the test VM; run the script through tests/vm/vm-run.sh" >&2
	exit 99
fi

# V4L2CUSE_TEST_FASTPATH=0 on the host runs a script's shim clients without
# the shim's fast path (every streaming ioctl and poll through CUSE).
if [[ -n ${V4L2CUSE_TEST_FASTPATH:-} ]]; then
	export V4L2CUSE_FASTPATH=$V4L2CUSE_TEST_FASTPATH
	echo "# V4L2CUSE_FASTPATH=$V4L2CUSE_FASTPATH"
fi

# The programs under test and this script's results directory, by the
# names every script uses.
daemon=$V4L2CUSE_BUILD/daemon/v4l2cuse
ctl=$V4L2CUSE_BUILD/daemon/v4l2cuse-ctl
run=$V4L2CUSE_BUILD/preload/v4l2cuse-run
R=$V4L2CUSE_RESULTS

# The 75% colour bars as full-range R'G'B' (what an app converting the
# pattern's limited-range BT.601 Y'CbCr to RGB should see), for checks in
# Python: json.loads(os.environ["BARS_RGB"]).
export BARS_RGB='[[191,191,191],[191,191,0],[0,191,191],[0,191,0],[191,0,191],[191,0,0],[0,0,191],[0,0,0]]'

_vm_n=0
_vm_failed=0
_vm_cleanups=()

# diag MSG...: a TAP comment line.
diag()
{
	echo "# $*"
}

# ok DESC: record a passed check.
ok()
{
	_vm_n=$((_vm_n + 1))
	echo "ok $_vm_n - $*"
}

# not_ok DESC [DETAIL...]: record a failed check; each DETAIL becomes a comment.
not_ok()
{
	local desc=$1 d
	shift
	_vm_n=$((_vm_n + 1))
	_vm_failed=$((_vm_failed + 1))
	echo "not ok $_vm_n - $desc"
	for d in "$@"; do
		diag "  $d"
	done
}

# check DESC CMD [ARGS...]: run CMD, show its output indented as comments and
# record ok/not_ok by its exit status. Always returns 0, so a failed check is
# counted but does not stop a `set -e` script; use `if CMD` to branch.
# CMD runs in a subshell (its output goes through a pipe): variables it sets
# are lost, and it must not leave background processes holding its stdout.
check()
{
	local desc=$1 rc
	shift
	local -
	set +e -o pipefail
	("$@") 2>&1 | sed -u 's/^/#   /'
	rc=${PIPESTATUS[0]}
	if ((rc == 0)); then
		ok "$desc"
	else
		not_ok "$desc" "exit status $rc: $*"
	fi
	return 0
}

# py_checks CMD [ARGS...]: run CMD (e.g. `python3 - ARGS` with the script on
# stdin); each "PASS text" or "FAIL text" line it prints becomes ok/not_ok,
# other lines are comments, and a non-zero exit status is a failure of its own.
py_checks()
{
	local line out rc=0
	out=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		*) diag "  $line" ;;
		esac
	done <<<"$out"
	((rc == 0)) || not_ok "$1 ran to the end" "exit status $rc"
}

# vm_compliance DESC OUT TIMEOUT_S CMD...: run CMD (a v4l2-compliance
# command line, maybe under v4l2cuse-run) with its output in OUT; a check
# that its summary says 0 failures and 0 warnings, the fail: and warn: lines
# shown if not.
vm_compliance()
{
	local desc=$1 out=$2 secs=$3 total
	shift 3
	timeout "$secs" "$@" >"$out" 2>&1 || true
	total=$(grep -E '^Total for ' "$out" | tail -1 || true)
	if grep -qE '^Total for .*Failed: 0, Warnings: 0' <<<"$total"; then
		ok "$desc: $total"
	else
		not_ok "$desc: 0 failures, 0 warnings" "$total"
		grep -E 'fail:|warn:' "$out" | head -40 | sed 's/^/#   /'
	fi
}

# vm_term_check DESC PID TIMEOUT_S: SIGTERM to PID (a child of the script);
# a check that it exits within TIMEOUT_S with status 0 (status 124 if it
# did not exit in time: it is left to the cleanups then, not waited for).
vm_term_check()
{
	local desc=$1 pid=$2 rc=0
	kill -TERM "$pid"
	timeout "$3" tail --pid="$pid" -f /dev/null || rc=124
	((rc == 124)) || wait "$pid" || rc=$?
	if ((rc == 0)); then ok "$desc"; else not_ok "$desc" "status $rc"; fi
}

# vm_start_daemon NODE... -- ARG...: v4l2cuse with ARGs in the background
# (its output in $R/daemon.log, its pid in daemon_pid, stopped at exit);
# bails out unless every /dev/NODE appears within 120 s.
vm_start_daemon()
{
	local nodes=() n
	while (($# > 0)) && [[ $1 != -- ]]; do
		nodes+=("$1")
		shift
	done
	shift
	"$daemon" "$@" >"$R/daemon.log" 2>&1 &
	daemon_pid=$!
	vm_on_exit kill "$daemon_pid"
	for n in "${nodes[@]}"; do
		vm_wait_node "/dev/$n" 120 || bail_out "/dev/$n did not appear: $(tail -5 "$R/daemon.log")"
	done
}

# bail_out MSG: stop the script now (cleanups still run); fails the test.
bail_out()
{
	echo "Bail out! $*"
	_vm_failed=$((_vm_failed + 1))
	exit 1
}

# vm_on_exit CMD [ARGS...]: run CMD when the script exits, newest first.
vm_on_exit()
{
	local q
	printf -v q '%q ' "$@"
	_vm_cleanups+=("$q")
}

_vm_exit()
{
	local status=$? i
	trap - EXIT ERR
	set +e
	for ((i = ${#_vm_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_vm_cleanups[i]}"
	done
	echo "1..$_vm_n"
	if ((_vm_failed > 0)); then
		diag "FAILED: $_vm_failed of $_vm_n checks"
		((status != 0)) || status=1
	elif ((status != 0)); then
		diag "script stopped with status $status after $_vm_n checks"
	else
		diag "all $_vm_n checks passed"
	fi
	exit "$status"
}
trap _vm_exit EXIT
if [[ $- == *e* ]]; then
	trap 'echo "# error: \"$BASH_COMMAND\" failed (status $?) at ${BASH_SOURCE[0]##*/}:$LINENO" >&2' ERR
fi

# vm_modprobe MOD [PARAM=VALUE...]: load a module of the guest kernel from the
# module cache (the host has none for it in /lib/modules).
vm_modprobe()
{
	/sbin/modprobe -d "$V4L2CUSE_MODDIR" -S "$V4L2CUSE_KVER" "$@"
}

# vm_v4l2loopback NR [PARAM...]: load v4l2loopback (the module DKMS built
# on the host for the guest kernel: v4l2loopback-dkms and
# linux-headers-KVER installed there) with one node, /dev/videoNR,
# exclusive_caps=0 and PARAMs, the benchmarks' reference. Returns 1 with a
# diag line saying why when there is none.
vm_v4l2loopback()
{
	local nr=$1 ko
	shift
	ko=$(find "/lib/modules/$V4L2CUSE_KVER/updates" -name 'v4l2loopback.ko*' 2>/dev/null | head -1 || true)
	if [[ -z $ko ]]; then
		diag "v4l2loopback: no module for $V4L2CUSE_KVER (install v4l2loopback-dkms and linux-headers-$V4L2CUSE_KVER on the host)"
		return 1
	fi
	vm_modprobe videodev || true
	if ! insmod "$ko" devices=1 video_nr="$nr" exclusive_caps=0 "$@" 2>"$V4L2CUSE_RESULTS/insmod.log"; then
		diag "v4l2loopback did not load: $(cat "$V4L2CUSE_RESULTS/insmod.log")"
		return 1
	fi
	vm_wait_node "/dev/video$nr" 10 || { diag "v4l2loopback: no /dev/video$nr"; return 1; }
}

# vm_wait_node PATH [TIMEOUT_S]: wait until PATH exists (default 20 s).
# Returns 1 on timeout.
vm_wait_node()
{
	local path=$1 timeout=${2:-20} i
	for ((i = 0; i < timeout * 10; i++)); do
		[[ -e $path ]] && return 0
		sleep 0.1
	done
	[[ -e $path ]] && return 0
	echo "# timed out after ${timeout}s waiting for $path" >&2
	return 1
}

# vm_find_video NAME: print /dev/videoN of the V4L2 device whose sysfs name is
# NAME (a glob, e.g. 'vivid-000-vid-cap'). Returns 1 if there is none.
vm_find_video()
{
	local f name
	for f in /sys/class/video4linux/video*/name; do
		[[ -r $f ]] || continue
		read -r name <"$f" || continue
		# shellcheck disable=SC2053
		if [[ $name == $1 ]]; then
			f=${f%/name}
			echo "/dev/${f##*/}"
			return 0
		fi
	done
	return 1
}

# vm_load_vivid: load vivid with one device and only its video capture node,
# and print that node (/dev/videoN) once it exists (20 s). Returns 1 on
# failure.
vm_load_vivid()
{
	local end=$((SECONDS + 20)) node
	vm_modprobe vivid n_devs=1 node_types=0x1 || return 1
	while ((SECONDS < end)); do
		if node=$(vm_find_video 'vivid-000-vid-cap') && [[ -e $node ]]; then
			echo "$node"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# vm_require CMD...: a not_ok per missing program. In CI a missing tool is a
# failure, never a skip. Returns 1 if any is missing.
vm_require()
{
	local c rc=0
	for c in "$@"; do
		if ! command -v "$c" >/dev/null; then
			not_ok "required program '$c' is installed" "run tools/dev.sh deps on the host"
			rc=1
		fi
	done
	return $rc
}

# vm_wait_for DESC TIMEOUT_S CMD...: poll CMD (each try limited to 20 s)
# until it succeeds or TIMEOUT_S seconds of wall time pass (a python3 start
# costs seconds under TCG); a check either way, returning 1 on timeout.
vm_wait_for()
{
	local desc=$1 secs=$2 limit=$((SECONDS + $2))
	shift 2
	while :; do
		if timeout 20 "$@" >/dev/null 2>&1; then
			ok "$desc"
			return 0
		fi
		((SECONDS < limit)) || break
		sleep 0.2
	done
	not_ok "$desc" "still false after ${secs}s: $*"
	return 1
}

# vm_host_load: the host's 1-minute load average, sampled by vm-run.sh every 5 s.
vm_host_load()
{
	tail -n 1 "$V4L2CUSE_RESULTS/.vm/host-load" 2>/dev/null | awk '{ print $2 }'
}

# vm_stat KEY [GROUP]: KEY's value in [GROUP] (default: daemon; a device:
# "device ID") of the `v4l2cuse-ctl stats` text on stdin.
vm_stat()
{
	awk -v k="$1" -v g="[${2:-daemon}]" '/^\[/ { in_g = $0 == g; next }
		in_g && $1 == k { print $2; exit }'
}

# vm_wait_idle [ID...]: wait until the daemon that v4l2cuse-ctl reaches
# ($V4L2CUSE_CTL_SOCKET) has no client left on the devices ID (default:
# all): no open handle, no parked request, no stream, no buffer, no shim
# connection, token or mapping; then print its stats. A client's exit reaches the daemon a
# moment later (the release is a request of its own). Returns 1 if that has
# not happened in 120 s (something is held for good).
vm_wait_idle()
{
	local end=$((SECONDS + 120)) s=
	while :; do
		if s=$(timeout 30 "$ctl" stats) &&
			awk -v ids=" $* " '
				/^\[device / { id = substr($0, 9, length($0) - 9)
					dev = ids == "  " || index(ids, " " id " ") > 0; next }
				/^\[/ { dev = 0 }
				dev && ($1 == "opens" || $1 == "parked" || $1 == "buffer-memory-bytes" ||
					$1 ~ /^shim-(connections|tokens|mappings)$/) && $2 != 0 { busy = 1 }
				dev && $1 == "streaming" && $2 != "no" { busy = 1 }
				END { exit busy }' <<<"$s"; then
			echo "$s"
			return 0
		fi
		((SECONDS < end)) || break
		sleep 0.5
	done
	echo "# the daemon still has clients after 120 s: $(tr '\n' ' ' <<<"$s")" >&2
	return 1
}

# --- Chromium ---------------------------------------------------------------
# One launch, no retry and no skip: with these flags, the page read from the
# checkout (9p) and 3 GiB of guest memory (tests/vm/meson.build) Chromium
# loads the page in every run (docs/shim.md, Tests); a launch
# that does not is a failure to look at, not to hide. Older variants
# (--in-process-gpu, --renderer-process-limit=1, the page in the guest's
# /tmp, 2 GiB) stalled in 4 of 5 runs before the node was opened.
#
# vm_chromium_gum LABEL [WRAPPER...]: headless Chromium (started through
# WRAPPER, e.g. v4l2cuse-run) opens tests/vm/gum.html; the track's label must
# contain LABEL and the canvas show the 75% bars ($BARS_RGB, tolerance 16).
vm_chromium_gum()
{
	local label=$1 log=$R/chromium.log result t0 pid
	shift
	mkdir -p /tmp/chromium-home
	: >"$log"
	# setsid: the whole process tree is killed at the end.
	HOME=/tmp/chromium-home setsid "$@" chromium --headless=new --no-sandbox \
		--disable-gpu --disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$(mktemp -d)" \
		--use-fake-ui-for-media-stream --enable-logging=stderr --v=0 \
		"file://$V4L2CUSE_SRC/tests/vm/gum.html" >"$log" 2>&1 &
	pid=$!
	t0=$SECONDS
	# Measured: the page reported after 86-543 s with the host's load
	# average at 5-9 (2 cores); Chromium's start under TCG is CPU bound
	# and stretches with the load. 1800 s: a hang detector, not a speed
	# test.
	while ((SECONDS - t0 < 1800)); do
		grep -q 'V4L2CUSE-RESULT' "$log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 2
	done
	echo "waited $((SECONDS - t0)) s for the page"
	kill -TERM -- "-$pid" 2>/dev/null || true
	sleep 2
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	result=$(grep -o 'V4L2CUSE-RESULT {.*}' "$log" | head -1 | sed 's/^V4L2CUSE-RESULT //; s/\\"/"/g')
	if [[ -z $result ]]; then
		echo "no result from the page after $((SECONDS - t0)) s; chromium.log:"
		tail -20 "$log"
		return 1
	fi
	echo "$result"
	python3 - "$result" "$label" <<'PY'
import json, os, sys
r = json.loads(sys.argv[1])
if "error" in r:
    print("getUserMedia failed:", r["error"])
    sys.exit(1)
want = json.loads(os.environ["BARS_RGB"])
bad = 0
for i, (got, wv) in enumerate(zip(r["pixels"], want)):
    ok = all(abs(a - e) <= 16 for a, e in zip(got, wv))
    bad += not ok
    print(f"bar {i}: RGB {tuple(got)}, want {tuple(wv)}{'' if ok else '  MISMATCH'}")
print(f"track '{r['label']}', {r['width']}x{r['height']}")
sys.exit(1 if bad or sys.argv[2] not in r["label"] else 0)
PY
}
