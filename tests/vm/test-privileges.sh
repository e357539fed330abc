#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Privileges (issue 8): the daemon started as root keeps only CAP_CHOWN
# (effective, permitted, bounding; every thread), no_new_privs, and a
# Landlock domain: a source outside what its configuration names is refused
# with one clear line at runtime (v4l2cuse-ctl set-source/add, SIGHUP), and
# with the pre-check disabled the kernel itself refuses the open; frames
# still flow; an unchanged SIGHUP keeps working. At start, an unreadable
# config or source (mode 000, another user's 0600, missing) is one line,
# exit status 2 and no node; --check-config says the same.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require python3 dd

helper=$V4L2CUSE_SRC/tests/vm/svc-helper.py
T=/run/priv-test
conf=$T/conf/v4l2cuse.conf
FRAME=$((320 * 240 * 2))	# YUYV

vm_modprobe cuse
vm_wait_node /dev/cuse 10
mkdir -p "$T/conf" "$T/media" "$T/outside"
python3 "$helper" mkclip "$T/media/clip.y4m" 320 240 8
cp "$T/media/clip.y4m" "$T/media/sibling.y4m"
cp "$T/media/clip.y4m" "$T/outside/copy.y4m"	# root-owned, 0644: DAC allows it

# wait_for DESC TIMEOUT_S CMD...: poll CMD; a check either way.
wait_for()
{
	local desc=$1 secs=$2 limit=$((SECONDS + $2))
	shift 2
	until timeout 20 "$@" >/dev/null 2>&1; do
		if ((SECONDS >= limit)); then
			not_ok "$desc" "still false after ${secs}s: $*"
			return 1
		fi
		sleep 0.3
	done
	ok "$desc"
}

# grab NODE OUT: three frames by read() (the daemon emulates read()).
grab()
{
	timeout 60 dd if="/dev/$1" of="$2" bs=$FRAME count=3 2>/dev/null &&
		[[ $(stat -c %s "$2") -eq $((3 * FRAME)) ]]
}

cat >"$conf" <<EOF
[daemon]
sandbox = required
selftest-timeout = 30

[device clip]
node = video50
source = file:$T/media/clip.y4m
size = 320x240
format = YUYV
frame-rate = 10

[device pat]
node = video51
source = pattern
size = 320x240
frame-rate = 10
EOF

# --- 1. the running daemon's privileges -----------------------------------
start_s=$SECONDS
"$daemon" --config "$conf" >"$R/daemon.log" 2>&1 &
pid=$!
vm_on_exit kill "$pid"
wait_for "the daemon is ready" 90 grep -q 'ready: 2 of 2 devices serving' "$R/daemon.log" ||
	bail_out "no readiness: $(tail -5 "$R/daemon.log")"
diag "ready after $((SECONDS - start_s)) s"
abi=$(sed -n 's/.*sandbox: Landlock ABI \([0-9]*\),.*/\1/p' "$R/daemon.log")
if [[ -n $abi ]]; then ok "Landlock domain entered (ABI $abi)"; else not_ok "Landlock domain entered" "$(grep sandbox "$R/daemon.log")"; fi

grep -E '^(Uid|Gid|Cap[A-Za-z]+|NoNewPrivs|Seccomp):' "/proc/$pid/status" | tee "$R/status.txt" | sed 's/^/# /'
field() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
check "uid is 0 (root: /dev/cuse is root's 0600)" test "$(field Uid | cut -f1)" = 0
for f in CapEff CapPrm CapBnd; do
	check "$f = 0000000000000001 (CAP_CHOWN only)" test "$(field $f)" = 0000000000000001
done
for f in CapInh CapAmb; do
	check "$f = 0000000000000000" test "$(field $f)" = 0000000000000000
done
check "NoNewPrivs = 1" test "$(field NoNewPrivs)" = 1
check "every thread has the same capabilities and no_new_privs" bash -c "
	n=0
	for s in /proc/$pid/task/*/status; do
		grep -qx 'CapEff:	0000000000000001' \$s && grep -qx 'CapBnd:	0000000000000001' \$s &&
			grep -qx 'NoNewPrivs:	1' \$s || exit 1
		n=\$((n + 1))
	done
	echo \"\$n threads\""

# --- 2. frames flow under the sandbox -------------------------------------
check "the file source serves 3 frames by read() (/dev/video50)" grab video50 "$R/clip.raw"
check "the pattern serves 3 frames by read() (/dev/video51)" grab video51 "$R/pat.raw"

# --- 3. sources named at runtime ------------------------------------------
# refused DESC PATTERN CMD...: CMD fails and its output matches PATTERN.
refused()
{
	local desc=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1) && rc=0 || rc=$?
	diag "$* -> status $rc: $out"
	if ((rc != 0)) && grep -q -- "$pat" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc" "status $rc: $out"
	fi
}
refused "set-source to a readable file the config does not name: refused, one clear line" \
	"'$T/outside/copy.y4m' is outside the sandbox (readable: .*$T/conf/" \
	"$ctl" set-source pat "file:$T/outside/copy.y4m"
refused "a sibling of a named file is outside too (rules are per file)" 'outside the sandbox' \
	"$ctl" set-source pat "file:$T/media/sibling.y4m"
check "set-source to the file the config names works" "$ctl" set-source pat "file:$T/media/clip.y4m"
check "set-source back to the pattern works" "$ctl" set-source pat pattern
refused "ctl add with a file outside: refused" 'outside the sandbox' \
	"$ctl" add extra node=video52 "source=file:$T/outside/copy.y4m" size=320x240
check "no /dev/video52 after the refused add" test ! -e /dev/video52
refused "set-placeholder with a file outside: refused" 'outside the sandbox' \
	"$ctl" set-placeholder pat "file:$T/outside/copy.y4m"

# --- 4. SIGHUP: unchanged, then naming a file outside ---------------------
kill -HUP "$pid"
wait_for "SIGHUP with an unchanged config: reloaded" 30 \
	grep -q 'reloaded: 2 of 2 devices serving' "$R/daemon.log"
check "frames after the reload (/dev/video50)" grab video50 "$R/clip2.raw"
cat >>"$conf" <<EOF

[device extra]
node = video52
source = file:$T/outside/copy.y4m
size = 320x240
EOF
kill -HUP "$pid"
wait_for "SIGHUP naming a file outside: the reload fails and says why" 30 \
	grep -q "reload failed, the running configuration stays: .*'$T/outside/copy.y4m' is outside the sandbox" "$R/daemon.log"
check "no /dev/video52 after the refused reload" test ! -e /dev/video52
check "the daemon still serves /dev/video51" grab video51 "$R/pat2.raw"
kill "$pid"
rc=0
wait "$pid" || rc=$?
check "SIGTERM: exit status 0" test "$rc" = 0

# --- 5. the kernel refuses, not just our pre-check ------------------------
head -n -6 "$conf" >"$conf.new" && mv "$conf.new" "$conf"
V4L2CUSE_SANDBOX_TEST_NO_CHECK=1 "$daemon" --config "$conf" >"$R/daemon-nocheck.log" 2>&1 &
pid=$!
vm_on_exit kill "$pid"
wait_for "the daemon without the pre-check is ready" 90 \
	grep -q 'ready: 2 of 2 devices serving' "$R/daemon-nocheck.log"
refused "Landlock: opening a root-owned 0644 file outside fails with EACCES" \
	"outside/copy.y4m': Permission denied" "$ctl" set-source pat "file:$T/outside/copy.y4m"
check "the named file still opens" "$ctl" set-source pat "file:$T/media/clip.y4m"
kill "$pid"
wait "$pid" || true

# --- 6. unreadable paths at start: one line, status 2, no node ------------
# start_fails DESC CONF PATTERN: the daemon and --check-config both exit 2
# with one line matching PATTERN, and /dev/video53 never appears.
start_fails()
{
	local desc=$1 c=$2 pat=$3 out rc lines
	out=$(timeout 60 "$daemon" --config "$c" 2>&1 >/dev/null) && rc=0 || rc=$?
	lines=$(grep -vc '^v4l2cuse-daemon-Message\|sandbox:' <<<"$out" || true)
	if ((rc == 2)) && ((lines == 1)) && grep -q "$pat" <<<"$out" && [[ ! -e /dev/video53 ]]; then
		ok "$desc: exit 2, one line, no node ($(grep -v 'Message' <<<"$out"))"
	else
		not_ok "$desc: exit 2, one line, no node" "status $rc, $lines lines: $out"
	fi
	out=$(timeout 60 "$daemon" --check-config --config "$c" 2>&1 >/dev/null) && rc=0 || rc=$?
	if ((rc == 2)) && grep -q "$pat" <<<"$out"; then
		ok "$desc: --check-config says the same"
	else
		not_ok "$desc: --check-config says the same" "status $rc: $out"
	fi
}
write_bad()
{
	mkdir -p "$T/bad"
	printf '[device bad]\nnode = video53\nsource = file:%s\nsize = 320x240\n' "$1" >"$T/bad/v.conf"
}
install -m 000 "$T/media/clip.y4m" "$T/media/mode000.y4m"
write_bad "$T/media/mode000.y4m"
start_fails "source file of mode 000" "$T/bad/v.conf" "mode000.y4m': Permission denied"
install -m 600 -o nobody "$T/media/clip.y4m" "$T/media/nobody.y4m"
write_bad "$T/media/nobody.y4m"
start_fails "source file of another user, 0600" "$T/bad/v.conf" "nobody.y4m': Permission denied"
write_bad "$T/media/missing.y4m"
start_fails "missing source file" "$T/bad/v.conf" "missing.y4m': No such file or directory"
printf '[device bad]\nnode = video53\nsource = pattern\nplaceholder = file:%s\n' \
	"$T/media/mode000.y4m" >"$T/bad/v.conf"
start_fails "placeholder file of mode 000" "$T/bad/v.conf" "mode000.y4m': Permission denied"
printf '[device bad]\nnode = video53\n' >"$T/bad/v.conf"
chmod 000 "$T/bad/v.conf"
start_fails "config file of mode 000" "$T/bad/v.conf" "v.conf.*Permission denied"
chmod 644 "$T/bad/v.conf"
mkdir -p "$T/bad/conf.d"
printf '[device bad2]\nnode = video54\n' >"$T/bad/conf.d/10-x.conf"
chmod 000 "$T/bad/conf.d/10-x.conf"
start_fails "a conf.d file of mode 000" "$T/bad/v.conf" "10-x.conf.*Permission denied"
check "no /dev/video54 either" test ! -e /dev/video54
diag "test time $SECONDS s"
