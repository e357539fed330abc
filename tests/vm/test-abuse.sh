#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Abuse tests (issue 8), with the clients of tests/vm/abuse-client.c, on one
# daemon with four 160x120 YUYV pattern devices (video50..53), a device
# buffer memory limit of 1M (config) and a global one of 2M (command line):
#  1. one process opens 1000 handles of video50 (all succeed), then more:
#     the device limit (1024) answers EMFILE, for it and for any other
#     process, not for the other devices; the daemon's fd count and VmRSS
#     before, while held and after; a fresh client streams after;
#  2. REQBUFS(32) MMAP without the shim: ENOTTY; through v4l2cuse-run on 4
#     handles of video50 and on video51 and video52: the owner gets as many
#     buffers as the device limit holds,
#     the other handles EBUSY, the device after the global limit ENOMEM; the
#     daemon's memfds never sum above the limit; read() emulation on video53
#     gets ENOMEM too; freeing makes room again;
#  3. a read() client and a streaming client that never read again: another
#     device keeps streaming without sequence gaps, the daemon's fds and
#     heap stay flat;
#  4. read() and DQBUF (V4L2CUSE_FASTPATH=0) parked under a SIGALRM every
#     1 ms (no SA_RESTART):
#     every interrupted call returns EINTR, none fails otherwise, the
#     daemon's fds and heap stay flat, and the device streams after;
#  5. another uid (nobody) holds 200 idle connections to video52's shim
#     socket, opening again at once each one the daemon closes: an attach
#     through v4l2cuse-run (median of 3) is not delayed by more than 1 s
#     against the same attach without them (median of 3), and gets its frame.
# "Heap" is heap-in-use-bytes of `v4l2cuse-ctl stats` (glibc's mallinfo2(),
# with its thread caches and GLib's slice caches off, so exact), compared
# once the client of the step has gone: see flat(). Figures go to
# abuse-figures.txt.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

client=$V4L2CUSE_BUILD/tests/vm/abuse-client
T=$(mktemp -d)
F=$R/abuse-figures.txt
: >"$F"
# The interrupt runs last this long each (read, then DQBUF).
intr_s=${V4L2CUSE_TEST_ABUSE_INTR_S:-25}

[[ -x $client ]] || bail_out "$client is not built"
vm_modprobe cuse
vm_wait_node /dev/cuse 10

fig()
{
	echo "$*" >>"$F"
	diag "figure: $*"
}

# wait_line FILE REGEX TIMEOUT_S: until FILE has a line matching REGEX.
wait_line()
{
	local end=$((SECONDS + $3))
	while ((SECONDS < end)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# Daemon figures: open fds, VmRSS in kB, bytes of its v4l2cuse memfds
# (each /proc read bounded: a stuck one shows the daemon's thread states).
dthreads()
{
	local t
	for t in /proc/"$dpid"/task/*; do
		echo "$(awk '{ print $3 }' "$t/stat" 2>/dev/null)/$(cat "$t/wchan" 2>/dev/null)"
	done | sort | uniq -c | tr '\n' ' '
}
dfds() { timeout 30 find "/proc/$dpid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
drss() { timeout 30 awk '/^VmRSS:/ { print $2 }' "/proc/$dpid/status"; }
dmemfd()
{
	local out
	if ! out=$(timeout 30 find "/proc/$dpid/fd" -mindepth 1 -lname '/memfd:v4l2cuse:*' \
		-exec stat -L -c %s {} + 2>&1); then
		echo "# dmemfd: /proc/$dpid/fd timed out or failed: $out; threads: $(dthreads)" >&2
	fi
	awk '/^[0-9]+$/ { sum += $1 } END { print sum + 0 }' <<<"$out"
}
dheap() { timeout 30 "$ctl" stats | vm_stat heap-in-use-bytes; }
snap() { echo "fds=$(dfds) heap=$(dheap) rss_kb=$(drss) memfd_bytes=$(dmemfd)"; }

# flat DESC SNAP0 SNAP1: the same fd count and at most heap_bound more bytes
# of heap in use. Both snapshots are taken in the same state (the same
# clients held, the step's own client gone and released: vm_wait_idle), so
# the heap differs only by what the step left behind. The bound leaves room
# for a container that grew once (a hash table, the main loop's poll table)
# and catches a leak of 33 bytes per interrupted call in step 4 (~2000
# calls); measured: the same to the byte (docs/reliability.md).
heap_bound=65536
flat()
{
	local h0 h1
	h0=$(sed -n 's/.* heap=\([0-9]*\) .*/\1/p' <<<"$2")
	h1=$(sed -n 's/.* heap=\([0-9]*\) .*/\1/p' <<<"$3")
	if [[ -n $h0 && -n $h1 ]] && ((h1 - h0 <= heap_bound)) &&
		[[ ${2%% *} == "${3%% *}" ]]; then
		ok "$1: the daemon's fds and heap stay flat (${2%% *}, heap in use $h0 -> $h1 bytes)"
	else
		not_ok "$1: the daemon's fds and heap stay flat (heap growth <= $heap_bound bytes)" \
			"$2" "$3"
	fi
}

quiet_kill() { kill "$@" 2>/dev/null || true; }

# start_client NAME CMD...: run CMD in the background, output in $T/NAME.out.
start_client()
{
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>&1 &
	eval "pid_$name=$!"
	vm_on_exit quiet_kill "$!"
}

# release NAME: SIGUSR1 to a holding client, wait for it.
release()
{
	local pid
	eval "pid=\$pid_$1"
	kill -USR1 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	sed "s/^/#   $1: /" "$T/$1.out"
}

frame=$((160 * 120 * 2))
page=$(getconf PAGESIZE)
per_buf=$(((frame + page - 1) / page * page))
dev_limit=$((1 << 20))
total_limit=$((2 << 20))
per_dev=$((dev_limit / per_buf))
cat >"$T/abuse.conf" <<-CONF
[daemon]
device-buffer-memory-limit = 1M
control-socket = $T/ctl.sock
CONF
for n in 50 51 52 53; do
	rate=10
	((n == 53)) && rate=2
	cat >>"$T/abuse.conf" <<-CONF
	[device v$n]
	node = video$n
	source = pattern,sizes=160x120
	format = YUYV
	size = 160x120
	frame-rate = $rate
	CONF
done
# Debug messages of the queues: the refused allocations name their limit.
# No allocator caches: heap-in-use-bytes is then exactly what the daemon holds.
G_MESSAGES_DEBUG=v4l2cuse-videobuf GLIBC_TUNABLES=glibc.malloc.tcache_count=0 G_SLICE=always-malloc \
	"$daemon" --config "$T/abuse.conf" --buffer-memory-limit 2M >"$R/daemon.log" 2>&1 &
dpid=$!
vm_on_exit quiet_kill "$dpid"
for n in 50 51 52 53; do
	vm_wait_node /dev/video$n 60 ||
		bail_out "/dev/video$n did not appear: $(tail -5 "$R/daemon.log")"
done
sleep 1
export V4L2CUSE_CTL_SOCKET=$T/ctl.sock
fig "daemon at start: $(snap)"

# ---------------------------------------------------------------------------
diag "t=${SECONDS}s: 1. 1000 handles"
before=$(snap)
t0=$SECONDS
start_client opens "$client" opens /dev/video50 1000 1100
if wait_line "$T/opens.out" '^HOLD' 600; then
	ok "one process holds 1000+ handles of video50 ($((SECONDS - t0)) s)"
else
	not_ok "one process holds 1000+ handles of video50" "$(tail -3 "$T/opens.out")"
fi
held=$(snap)
check "all 1000 opens succeeded" grep -q '^opened=1000 ' "$T/opens.out"
check "the 1025th open fails with EMFILE (the device limit is 1024 handles)" \
	grep -q '^limit-open=1025 errno=EMFILE' "$T/opens.out"
check "every held handle answers QUERYCAP" grep -q '^querycap-all=ok' "$T/opens.out"
check "another process gets EMFILE on video50 too" bash -c \
	"! timeout 20 cat /dev/video50 >/dev/null 2>'$T/cat.err'; cat '$T/cat.err';
	 grep -q 'Too many open files' '$T/cat.err'"
check "video51 of the same daemon still opens" timeout 20 bash -c 'exec 3</dev/video51'
check "v4l2cuse-ctl stats shows 1024 opens on video50" \
	test "$(timeout 30 "$ctl" stats | vm_stat opens "device v50")" = 1024
release opens
# close() returns before the daemon has seen the RELEASE: wait for all 1024.
t0=$SECONDS
wait_check_opens()
{
	local end=$((SECONDS + 120))
	while ((SECONDS < end)); do
		[[ $(timeout 30 "$ctl" stats | vm_stat opens "device v50") == 0 ]] && return 0
		sleep 0.5
	done
	return 1
}
if wait_check_opens; then
	ok "the daemon has released all 1024 handles ($((SECONDS - t0)) s after the last close)"
else
	not_ok "the daemon releases all 1024 handles" "$("$ctl" list 2>&1)"
fi
after=$(snap)
fig "opens: $(grep -E '^(opened|limit-open|released)' "$T/opens.out" | tr '\n' ' ')"
fig "opens daemon: before $before; holding 1024 $held; after close $after"
fd0=${before%% *}
fd2=${after%% *}
if [[ $fd0 == "$fd2" ]]; then
	ok "the daemon's fd count is the same after the 1024 closes ($fd0)"
else
	not_ok "the daemon's fd count is the same after the 1024 closes" "$before" "$after"
fi
out=$(timeout 120 "$run" "$client" count /dev/video50 3 2>&1) || true
if [[ $out =~ frames=([0-9]+).*gaps=0 ]] && ((BASH_REMATCH[1] > 0)); then
	ok "a fresh client streams video50 after the closes ($out)"
else
	not_ok "a fresh client streams video50 after the closes" "$out"
fi

# ---------------------------------------------------------------------------
diag "t=${SECONDS}s: 2. REQBUFS(32) under the memory limits"
fig "limits: device $dev_limit bytes, global $total_limit bytes;" \
	"buffer $frame bytes, $per_buf in memory; $per_dev per device"
# Without the preload shim a handle has no streaming I/O (docs/shim.md).
start_client plain "$client" reqbufs /dev/video50 32 1
wait_line "$T/plain.out" '^(HOLD|error)' 120 || true
check "video50 without v4l2cuse-run: REQBUFS is ENOTTY, nothing allocated" \
	grep -q '^handle=0 reqbufs=32 errno=ENOTTY' "$T/plain.out"
release plain
# The buffers alone: a handle's fast-path memfd (docs/shim.md) is charged to
# the device's limit too, and would shift every count below.
nofast="env V4L2CUSE_FASTPATH=0 $run"
start_client rb50 $nofast "$client" reqbufs /dev/video50 32 4
wait_line "$T/rb50.out" '^(HOLD|error)' 120 || true
check "video50: the owner gets $per_dev of 32 buffers (device limit)" \
	grep -q "^handle=0 reqbufs=32 got=$per_dev\$" "$T/rb50.out"
check "video50: the 3 other handles get EBUSY" \
	bash -c "[[ \$(grep -c 'errno=EBUSY' '$T/rb50.out') -eq 3 ]]"
start_client rb51 $nofast "$client" reqbufs /dev/video51 32 1
wait_line "$T/rb51.out" '^(HOLD|error)' 120 || true
left=$((total_limit - 2 * per_dev * per_buf))
check "video51: $per_dev buffers (device limit; $left bytes of the global limit left)" \
	grep -q "^handle=0 reqbufs=32 got=$per_dev\$" "$T/rb51.out"
start_client rb52 $nofast "$client" reqbufs /dev/video52 32 1
wait_line "$T/rb52.out" '^(HOLD|error)' 120 || true
if ((left / per_buf < 2)); then
	check "video52: ENOMEM (the global limit leaves room for $((left / per_buf)) buffer, min 2)" \
		grep -q '^handle=0 reqbufs=32 errno=ENOMEM' "$T/rb52.out"
else
	check "video52: $((left / per_buf)) buffers (what the global limit leaves)" \
		grep -q "^handle=0 reqbufs=32 got=$((left / per_buf))\$" "$T/rb52.out"
fi
out=$(timeout 60 "$client" noread /dev/video53 read 2>&1) || true
check "video53: read() gets ENOMEM while the global limit is used up ($out)" \
	grep -q 'error: read: ENOMEM' <<<"$out"
mem=$(dmemfd)
full=$(snap)
if ((mem <= total_limit && mem == 2 * per_dev * per_buf)); then
	ok "the daemon's memfds sum to $mem bytes <= $total_limit"
else
	not_ok "the daemon's memfds stay within the global limit" "$full"
fi
"$ctl" list >"$R/list-reqbufs.txt" 2>&1 || true
check "v4l2cuse-ctl list shows video50's buffer memory against its limit" \
	bash -c "awk '\$2 == \"video50\"' '$R/list-reqbufs.txt' |
		 grep -q ' $((per_dev * per_buf / 1024))K/1M '"
release rb50
freed=$(dmemfd)
check "REQBUFS freed with the handle: memfds down to $freed bytes" \
	test "$freed" -eq $((per_dev * per_buf))
release rb52
start_client rb52b $nofast "$client" reqbufs /dev/video52 32 1
wait_line "$T/rb52b.out" '^(HOLD|error)' 120 || true
check "video52 after video50 let go: $per_dev buffers" \
	grep -q "^handle=0 reqbufs=32 got=$per_dev\$" "$T/rb52b.out"
release rb51
release rb52b
fig "reqbufs: with the limits used $full; all freed $(snap)"
grep -h '^handle=' "$T"/rb5*.out | sed 's/^/reqbufs: /' >>"$F"
check "the daemon logged nothing above debug level for the refused allocations" \
	bash -c "! grep -E 'CRITICAL|WARNING|ERROR' '$R/daemon.log'"
check "each refusal is one debug line naming the device or the global limit" bash -c \
	"grep -q 'would exceed the video50 buffer memory limit of $dev_limit bytes' '$R/daemon.log' &&
	 grep -q 'would exceed the global buffer memory limit of $total_limit bytes' '$R/daemon.log'"

# ---------------------------------------------------------------------------
diag "t=${SECONDS}s: 3. clients that never read"
start_client nr50 "$client" noread /dev/video50 read
start_client nr51 "$run" "$client" noread /dev/video51 stream
wait_line "$T/nr50.out" '^(HOLD|error)' 120 || true
wait_line "$T/nr51.out" '^(HOLD|error)' 120 || true
check "a read() client took one frame and stops reading" grep -q '^HOLD' "$T/nr50.out"
check "a streaming client took one frame and stops dequeuing" grep -q '^HOLD' "$T/nr51.out"
s0=$(snap)
out=$(timeout 200 "$run" "$client" count /dev/video52 20 2>&1) || true
vm_wait_idle v52 >/dev/null || true
s1=$(snap)
fig "never-reading clients: another device for 20 s: $out; daemon $s0 -> $s1"
if [[ $out =~ frames=([0-9]+).*gaps=0\ missing=0 ]] && ((BASH_REMATCH[1] > 0)); then
	ok "video52 streams without sequence gaps meanwhile ($out)"
else
	not_ok "video52 streams without sequence gaps meanwhile" "$out"
fi
flat "never-reading clients" "$s0" "$s1"
"$ctl" list >"$R/list-noread.txt" 2>&1 || true
release nr50
release nr51

# ---------------------------------------------------------------------------
diag "t=${SECONDS}s: 4. interrupts in a loop"
for how in read dqbuf; do
	w=
	# DQBUF under the shim without its fast path: through it a blocking
	# DQBUF waits in the shim (EINTR from there, tests/unit/test-fastpath.c),
	# never parked in the daemon, whose interrupted count this checks.
	[[ $how == dqbuf ]] && w="env V4L2CUSE_FASTPATH=0 $run"
	vm_wait_idle v53 >/dev/null || true
	s0=$(snap)
	i0=$(timeout 30 "$ctl" stats | vm_stat interrupted "device v53")
	t0=$SECONDS
	# intr_s seconds, and on until 100 calls were interrupted (a loaded
	# machine interrupts fewer per second; measured idle: 982-1998 in 25 s).
	out=$(timeout $((intr_s * 10 + 120)) $w "$client" intr /dev/video53 "$intr_s" "$how" 1000 100 \
		2>&1) || true
	vm_wait_idle v53 >/dev/null || true
	s1=$(snap)
	i1=$(timeout 30 "$ctl" stats | vm_stat interrupted "device v53")
	fig "interrupts ($how, ${intr_s} s, $((SECONDS - t0)) s wall): $out; daemon $s0 -> $s1;" \
		"interrupted $i0 -> $i1"
	eintr=0 frames=0
	if [[ $out =~ calls=([0-9]+)\ eintr=([0-9]+)\ ok=([0-9]+)\ other=0 ]]; then
		eintr=${BASH_REMATCH[2]}
		frames=${BASH_REMATCH[3]}
	fi
	if ((eintr >= 100)) && [[ $i0 =~ ^[0-9]+$ && $i1 =~ ^[0-9]+$ ]] && ((i1 > i0)); then
		ok "$how: $eintr interrupted calls returned EINTR ($((i1 - i0)) answered by the" \
			"daemon while parked), $frames frames, no other error"
	else
		not_ok "$how: interrupted calls return EINTR and nothing else" "$out" \
			"the daemon's interrupted count: $i0 -> $i1"
	fi
	flat "$how interrupts" "$s0" "$s1"
done
# ---------------------------------------------------------------------------
diag "t=${SECONDS}s: 5. idle connections of another uid to the shim socket"
attach_ms()
{
	local out
	out=$(timeout 120 "$run" "$client" attach /dev/video52 2>&1) || true
	echo "$out" >>"$T/attach.out"
	[[ $out =~ attach-ms=([0-9.]+)\ frame-ms=([0-9.]+) ]] || return 1
	awk -v a="${BASH_REMATCH[1]}" -v f="${BASH_REMATCH[2]}" 'BEGIN { printf "%d", a + f }'
}
# median3 A B C
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
vm_wait_idle v52 >/dev/null || true
s0=$(snap)
alone=()
for i in 1 2 3; do
	alone+=("$(attach_ms || echo failed)")
done
sock=/run/v4l2cuse/video52.sock
check "the shim socket of video52 is $sock, 0666" test "$(stat -c %a "$sock" 2>&1)" = 666
start_client conns setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$client" connects "$sock" 200
if wait_line "$T/conns.out" '^HOLD' 120; then
	ok "uid 65534 holds 200 idle connections to $sock"
else
	not_ok "uid 65534 holds 200 idle connections" "$(tail -3 "$T/conns.out")"
fi
sleep 2		# past the first round of closes and reconnects
beside=()
for i in 1 2 3; do
	beside+=("$(attach_ms || echo failed)")
done
# Medians of 3: the holder reopens every connection the daemon closes as
# fast as it can, so beside it the attach also shares the VM's CPUs with
# that loop (measured: 1 of 3 attaches ~0.6 s slower, the others ~0.1-0.3 s).
base=$(median3 "${alone[@]}") worst=$(median3 "${beside[@]}")
fig "attach + first frame on video52 under v4l2cuse-run: alone ${alone[*]} ms," \
	"beside 200 idle connections of uid 65534 ${beside[*]} ms"
if [[ ${alone[*]} != *failed* && ${beside[*]} != *failed* ]] && ((worst <= base + 1000)); then
	ok "an attach beside 200 idle connections of another uid: median ${worst} ms (alone: ${base} ms)"
else
	not_ok "an attach beside 200 idle connections of another uid is delayed by at most 1 s" \
		"alone: ${alone[*]} ms, beside them: ${beside[*]} ms" "$(tail -3 "$T/attach.out")"
fi
release conns
check "the connections' holder kept them until released" grep -q '^released reopened=' "$T/conns.out"
vm_wait_idle v52 >/dev/null || true
sleep 6		# the daemon's 5 s timeout of connections that never said HELLO
s1=$(snap)
flat "idle connections of another uid" "$s0" "$s1"
out=$(timeout 120 "$run" "$client" count /dev/video53 3 2>&1) || true
if [[ $out =~ frames=([0-9]+).*gaps=0 ]] && ((BASH_REMATCH[1] > 0)); then
	ok "video53 streams after the interrupts ($out)"
else
	not_ok "video53 streams after the interrupts" "$out"
fi
check "the daemon is still running" kill -0 "$dpid"
fig "daemon at the end: $(snap), ${SECONDS} s"
cp "$T"/*.out "$R/" 2>/dev/null || true
