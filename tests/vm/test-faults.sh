#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Fault tests (issue 8), with the clients of tests/vm/fault-client.c:
#  1. a client SIGKILLed while waiting in DQBUF (in the shim, through its
#     fast path; and parked in the daemon with V4L2CUSE_FASTPATH=0), in
#     read(), in poll(): in an interruptible wait (S, never D), the daemon
#     answers the parked DQBUF and read() because of the interrupt (its
#     `interrupted` counter, not a frame), the client is reaped, and the
#     daemon serves the next client;
#  2. the daemon SIGKILLed while 3 clients stream (read(), mmap through
#     v4l2cuse-run, a poll() loop): each ends with an error (errno or
#     revents recorded), none hangs (60 s); a supervisor restarts the
#     daemon (as the unit's Restart=on-failure would), the node is back and
#     clients that reopen stream again from sequence 0;
#  3. a uvc passthrough of vivid with a placeholder, one reader streaming
#     through V4L2CUSE_TEST_FAULT_CYCLES (default 3; 20 for the figures)
#     unplug/replug cycles of vivid: placeholder frames and SIGNAL `lost`
#     in v4l2cuse-ctl list while it is gone, camera frames and `ok` after,
#     and the daemon's fd count flat and its heap in
#     use within a bound, sampled every cycle (series in faults-cycles.txt).
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl || bail_out "tools missing"

client=$V4L2CUSE_BUILD/tests/vm/fault-client
T=$(mktemp -d)
cycles=${V4L2CUSE_TEST_FAULT_CYCLES:-3}
# All by default; a subset for a long run of one part (parked daemon-kill unplug).
parts=${V4L2CUSE_TEST_FAULT_PARTS:-parked daemon-kill unplug}

[[ -x $client ]] || bail_out "$client is not built"
vm_modprobe cuse
vm_wait_node /dev/cuse 10

# wait_lines FILE REGEX N TIMEOUT_S: until FILE has N lines matching REGEX.
# Deadlines are wall time (SECONDS): a loop iteration costs far more than its
# sleep under TCG.
wait_lines()
{
	local f=$1 re=$2 want=$3 end=$((SECONDS + $4)) n
	while ((SECONDS < end)); do
		n=$(grep -cE "$re" "$f" 2>/dev/null) || n=0
		((n >= want)) && return 0
		sleep 0.1
	done
	return 1
}

# slow_stat KEY: KEY of the slow device in v4l2cuse-ctl stats.
slow_stat()
{
	timeout 30 "$ctl" --socket "$T/ctl.sock" stats | vm_stat "$1" "device slow"
}

# park_kill DESC WANT CMD...: CMD parks after its first frame and is
# SIGKILLed. WANT: how many requests it parks in the daemon (1: DQBUF or
# read(); 0: poll(), whose wait is the kernel's).
#
# The kill is a CUSE INTERRUPT for the parked request: the daemon must
# answer it at once instead of leaving it to the next frame (due ~9 s
# later), and the killed task waits for that answer uninterruptibly (D). So
# the check is that the interrupt answered it, not how fast: once the
# daemon has the request parked (stats: parked), the kill, and its
# `interrupted` count goes up by WANT; the task is reaped (park-kill gives
# up after 60 s). The times are figures (docs/reliability.md).
park_kill()
{
	local desc=$1 want=$2 out line i0 i1 pid go n end
	shift 2
	i0=$(slow_stat interrupted)
	rm -f "$T/go"
	mkfifo "$T/go"
	timeout 300 "$client" park-kill "$@" <"$T/go" >"$T/park.out" 2>&1 &
	pid=$!
	exec {go}>"$T/go"
	# Its first frame takes ~10 s; PARKED comes after it, so a parked
	# request seen from then on is the one to interrupt.
	end=$((SECONDS + 120))
	until grep -q '^client: PARKED' "$T/park.out" || ((SECONDS >= end)); do
		sleep 0.2
	done
	while ((want)) && n=$(slow_stat parked) && ((n < want && SECONDS < end)); do
		sleep 0.2
	done
	echo go >&"$go"
	exec {go}>&-
	wait "$pid" || true
	out=$(cat "$T/park.out")
	i1=$(slow_stat interrupted)
	sed 's/^/#   /' <<<"$out"
	line=$(grep '^parked-states=' <<<"$out") || line=
	if [[ $line =~ after-kill-states=([^ ]*)\ reap-ms=([0-9.]+)\ d-ms=([0-9.]+) ]]; then
		diag "$desc: $line; interrupted $i0 -> $i1"
		ok "$desc: reaped ${BASH_REMATCH[2]} ms after SIGKILL (${BASH_REMATCH[3]} ms in D)"
		# Parked means S (an interruptible wait): D while parked would be
		# a wait that no signal can break.
		if [[ $line =~ parked-states=[^D\ ]+\  ]]; then
			ok "$desc: parked in an interruptible wait (S), not D"
		else
			not_ok "$desc: parked in an interruptible wait (S), not D" "$line"
		fi
	else
		not_ok "$desc: parked and reaped" "$out"
	fi
	if [[ $i0 =~ ^[0-9]+$ && $i1 =~ ^[0-9]+$ ]] && ((i1 - i0 == want)); then
		ok "$desc: the daemon answered $want parked request(s) because of the kill"
	else
		not_ok "$desc: the daemon answers $want parked request(s) because of the kill" \
			"interrupted $i0 -> $i1"
	fi
}

# next_client: one frame for a new reader (due one frame interval after it
# starts streaming: 10 s).
next_client()
{
	local out
	out=$(timeout 60 "$client" read /dev/video42 --count 1 2>&1) || true
	if grep -q '^DONE' <<<"$out"; then
		ok "the daemon serves the next client after $1"
	else
		not_ok "the daemon serves the next client after $1" "$out"
	fi
}

# wait_gone PATH: until PATH is gone (20 s).
wait_gone()
{
	local end=$((SECONDS + 20))
	while ((SECONDS < end)); do
		[[ -e $1 ]] || return 0
		sleep 0.1
	done
	return 1
}

# The VM has no systemd as PID 1: this loop stands in for the unit's
# Restart=on-failure and RestartSec=2 (after an exit with a non-zero status
# or by a signal, start it again 2 s later; a clean exit or $T/stop ends it).
supervise()
{
	local st
	while :; do
		"$daemon" --config "$T/main.conf" >>"$R/daemon-main.log" 2>&1 &
		echo $! >"$T/daemon.pid"
		st=0
		{ wait $!; } 2>/dev/null || st=$?	# no "Killed" line in the log
		echo "$EPOCHREALTIME exit $st" >>"$R/supervisor.log"
		if ((st == 0)) || [[ -e $T/stop ]]; then
			break
		fi
		sleep 2
		echo "$EPOCHREALTIME restart" >>"$R/supervisor.log"
	done
}

stop_supervisor()
{
	touch "$T/stop"
	kill "$(cat "$T/daemon.pid")" 2>/dev/null || true
	wait "$sup_pid" 2>/dev/null || true
}

# unload_vivid: unplug (unbind the platform device, its node goes, as a USB
# camera's would), then rmmod once the daemon has let go of it (120 s).
unload_vivid()
{
	local end=$((SECONDS + 120))
	echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind || return 1
	while ((SECONDS < end)); do
		/sbin/rmmod vivid 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# wait_kind KIND N FROM TIMEOUT_S: until the reader logged N frames of KIND
# after its line FROM.
wait_kind()
{
	local end=$((SECONDS + $4)) n
	while ((SECONDS < end)); do
		n=$(tail -n +"$(($3 + 1))" "$R/cycles-reader.log" | grep -c "^frame .* $1 ") || n=0
		((n >= $2)) && return 0
		sleep 0.1
	done
	return 1
}

# expect_signal WANT WHEN: unless the SIGNAL column of the uvc device in
# v4l2cuse-ctl list reads WANT, add a failure (WHEN says at what point) to bad.
expect_signal()
{
	local s
	s=$(timeout 30 "$ctl" --socket "$T/ctl-uvc.sock" list 2>/dev/null | awk '$1 == "uvc" { print $4 }')
	[[ $s == "$1" ]] || bad+=("$2: SIGNAL '$s' in v4l2cuse-ctl list, not $1")
}

# sample: "FDS HEAP_BYTES RSS_KB" of the uvc daemon (heap in use from
# v4l2cuse-ctl stats).
sample()
{
	echo "$(find /proc/"$uvc_pid"/fd -mindepth 1 -maxdepth 1 | wc -l)" \
		"$(timeout 30 "$ctl" --socket "$T/ctl-uvc.sock" stats | vm_stat heap-in-use-bytes)" \
		"$(awk '/^VmRSS:/ { print $2 }' /proc/"$uvc_pid"/status)"
}

# stop_pid PID: a cleanup for a process that may have ended already.
stop_pid()
{
	kill "$1" 2>/dev/null || true
}

# --- 1. clients SIGKILLed while parked ---------------------------------------

part_parked()
{
	# 160x120 at one frame every 10 s: after its first frame a client waits ~10 s
	# for the next, long enough to be found parked and killed there.
	cat >"$T/slow.conf" <<-CONF
	[daemon]
	control-socket = $T/ctl.sock
	[device slow]
	node = video42
	source = pattern,fps=1/10,sizes=160x120
	format = YUYV
	size = 160x120
	frame-rate = 1/10
	CONF
	"$daemon" --config "$T/slow.conf" >"$R/daemon-slow.log" 2>&1 &
	slow_pid=$!
	vm_on_exit stop_pid "$slow_pid"
	vm_wait_node /dev/video42 60 || bail_out "/dev/video42 did not appear: $(tail -5 "$R/daemon-slow.log")"

	diag "t=${SECONDS}s: parked clients"
	# Through the shim's fast path a blocking DQBUF waits in the shim
	# itself (on its wake-up socket): nothing is parked in the daemon.
	park_kill "waiting in DQBUF (shim fast path, MMAP)" 0 "$run" "$client" dqbuf /dev/video42
	next_client "the fast-path DQBUF kill"
	park_kill "parked in DQBUF (shim, V4L2CUSE_FASTPATH=0)" 1 \
		env V4L2CUSE_FASTPATH=0 "$run" "$client" dqbuf /dev/video42
	next_client "the DQBUF kill"
	park_kill "parked in read()" 1 "$client" read /dev/video42
	next_client "the read() kill"
	park_kill "parked in poll()" 0 "$client" poll /dev/video42
	next_client "the poll() kill"
	check "daemon alive after the parked kills" kill -0 "$slow_pid"
	kill "$slow_pid"
	wait "$slow_pid" || true
	wait_gone /dev/video42 || bail_out "/dev/video42 still there after SIGTERM"
}

# --- 2. the daemon SIGKILLed under 3 streaming clients -------------------------

part_daemon_kill()
{
	# One device per client (a queue has one owner: a second reader gets EBUSY),
	# all three in the one daemon.
	for n in 42 43 44; do
		cat <<-CONF
	[device main$n]
	node = video$n
	source = pattern,fps=10,sizes=160x120
	format = YUYV
	size = 160x120
	frame-rate = 10
	CONF
	done >"$T/main.conf"
	declare -A knode=([read]=/dev/video42 [poll]=/dev/video43 [dqbuf]=/dev/video44)
	supervise &
	sup_pid=$!
	vm_on_exit stop_supervisor
	for n in 42 43 44; do
		vm_wait_node /dev/video$n 60 ||
			bail_out "/dev/video$n did not appear: $(tail -5 "$R/daemon-main.log")"
	done

	diag "t=${SECONDS}s: daemon SIGKILL under 3 clients"
	declare -A kpid
	for kind in read poll dqbuf; do
		if [[ $kind == dqbuf ]]; then
			timeout 300 "$run" "$client" dqbuf "${knode[$kind]}" >"$R/kill-$kind.log" 2>&1 &
		else
			timeout 300 "$client" $kind "${knode[$kind]}" >"$R/kill-$kind.log" 2>&1 &
		fi
		kpid[$kind]=$!
	done
	for kind in read poll dqbuf; do
		wait_lines "$R/kill-$kind.log" '^frame ' 5 120 ||
			not_ok "the $kind client streams before the kill" "$(tail -3 "$R/kill-$kind.log")"
	done
	old_pid=$(cat "$T/daemon.pid")
	t_kill=$EPOCHREALTIME
	kill -KILL "$old_pid"
	# Each client must end on its own (measured: within 14-84 ms); one still
	# there after 60 s hangs.
	end=$((SECONDS + 60))
	while ((SECONDS < end)); do
		alive=0
		for kind in read poll dqbuf; do
			kill -0 "${kpid[$kind]}" 2>/dev/null && alive=$((alive + 1))
		done
		((alive == 0)) && break
		sleep 0.1
	done
	for kind in read poll dqbuf; do
		st=0
		if kill -0 "${kpid[$kind]}" 2>/dev/null; then
			kill -KILL "${kpid[$kind]}"
			wait "${kpid[$kind]}" 2>/dev/null || true
			not_ok "$kind client ends after the daemon's SIGKILL (it hangs)" \
				"$(tail -2 "$R/kill-$kind.log")"
			continue
		fi
		wait "${kpid[$kind]}" || st=$?
		end=$(grep '^END ' "$R/kill-$kind.log" | tail -1) || end=
		frames=$(grep -c '^frame ' "$R/kill-$kind.log") || frames=0
		if [[ $end =~ t=([0-9.]+)$ ]]; then
			ms=$(awk -v a="$t_kill" -v b="${BASH_REMATCH[1]}" 'BEGIN { printf "%d", (b - a) * 1000 }')
			diag "$kind client: $frames frames, then ${end% t=*}, ${ms} ms after the kill, exit $st"
			if [[ $end =~ errno=(ENODEV|ENOTCONN|ECONNABORTED|EIO)\ |revents=.*(POLLERR|POLLHUP) ]] &&
				((st == 3)); then
				ok "$kind client: error ${BASH_REMATCH[1]}${BASH_REMATCH[2]} ${ms} ms after the daemon's SIGKILL"
			else
				not_ok "$kind client ends with ENODEV/ENOTCONN/ECONNABORTED/EIO or POLLERR/POLLHUP" \
					"$end (exit $st)"
			fi
		else
			not_ok "$kind client ends with an error line" "exit $st" "$(tail -2 "$R/kill-$kind.log")"
		fi
	done

	# The nodes are back: they exist again (the new daemon registered them),
	# then the restarted daemon answers an ioctl on each. Measured 8-11 s on
	# an idle host, 30-41 s at load 6-7: 300 s is for a restart that never
	# comes back.
	back=false
	end=$((SECONDS + 300))
	while ((SECONDS < end)); do
		if [[ $(cat "$T/daemon.pid") != "$old_pid" && -e /dev/video42 && -e /dev/video43 &&
			-e /dev/video44 ]]; then
			back=true
			break
		fi
		sleep 0.05
	done
	ms_nodes=$(awk -v a="$t_kill" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	if $back; then
		for n in 42 43 44; do
			timeout 30 v4l2-ctl -d /dev/video$n --get-fmt-video >/dev/null 2>&1 || back=false
		done
	fi
	ms=$(awk -v a="$t_kill" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	if $back; then
		ok "restarted (RestartSec=2 included): nodes back ${ms_nodes} ms, answering ${ms} ms after the kill"
	else
		not_ok "the daemon is restarted and its nodes are back" "$(tail -5 "$R/daemon-main.log")"
	fi
	diag "supervisor: $(tr '\n' ';' <"$R/supervisor.log")"

	# Clients that reopen stream again; the MMAP one from sequence 0.
	out=$(timeout 120 "$run" "$client" dqbuf "${knode[dqbuf]}" --count 5 2>&1) || true
	echo "$out" >"$R/reopen-dqbuf.log"
	seqs=$(sed -n 's/^frame [0-9]* seq=\([0-9]*\) .*/\1/p' <<<"$out" | tr '\n' ' ')
	# From 0 and rising: a gap is a frame the source made while every
	# buffer was with the app (vb2 drivers count those too; under TCG at
	# load a client falls 4 frames behind now and then, CI saw 0 1 2 4 5).
	rising=$(awk '{ ok = NF == 5 && $1 == 0; for (i = 2; i <= NF; i++) if ($i <= $(i - 1)) ok = 0; print ok ? "yes" : "no" }' <<<"$seqs")
	if grep -q '^DONE' <<<"$out" && [[ $rising == yes ]]; then
		ok "reopened MMAP client (shim): 5 frames, sequence $seqs"
	else
		not_ok "reopened MMAP client streams from sequence 0" "sequence: $seqs" "$(tail -2 <<<"$out")"
	fi
	for kind in read poll; do
		out=$(timeout 120 "$client" $kind "${knode[$kind]}" --count 5 2>&1) || true
		if grep -q '^DONE' <<<"$out" && (($(grep -c '^frame ' <<<"$out") == 5)); then
			ok "reopened $kind client: 5 frames"
		else
			not_ok "reopened $kind client streams again" "$(tail -2 <<<"$out")"
		fi
	done
	stop_supervisor
	for n in 42 43 44; do
		wait_gone /dev/video$n || bail_out "/dev/video$n still there after SIGTERM"
	done
}

# --- 3. the passthrough camera vanishes and returns -----------------------------

part_unplug()
{

	diag "t=${SECONDS}s: vivid unplug/replug, $cycles cycles"
	cam=$(vm_load_vivid) || bail_out "vivid did not come up"
	# No OSD text: a camera frame never has a flat bottom row by chance.
	v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true
	bad=()
	cat >"$T/uvc.conf" <<-CONF
	[daemon]
	control-socket = $T/ctl-uvc.sock
	[device uvc]
	node = video43
	source = uvc:$cam,retry_ms=200
	size = 320x180
	format = YUYV
	frame-rate = 15
	CONF
	# No allocator caches: heap-in-use-bytes is then exactly what the
	# daemon holds (see the check below).
	GLIBC_TUNABLES=glibc.malloc.tcache_count=0 G_SLICE=always-malloc \
		"$daemon" --config "$T/uvc.conf" >"$R/daemon-uvc.log" 2>&1 &
	uvc_pid=$!
	vm_on_exit stop_pid "$uvc_pid"
	vm_wait_node /dev/video43 90 || bail_out "/dev/video43 did not appear: $(tail -5 "$R/daemon-uvc.log")"
	timeout $((cycles * 600 + 300)) "$client" read /dev/video43 --classify >"$R/cycles-reader.log" 2>&1 &
	reader=$!
	vm_on_exit stop_pid "$reader"
	wait_kind camera 10 0 120 || bail_out "the reader gets no camera frames: $(tail -3 "$R/cycles-reader.log")"
	expect_signal ok "streaming the camera"
	echo "cycle fds heap_bytes rss_kb card_frames camera_frames seconds" >"$R/faults-cycles.txt"
	echo "0 $(sample) 0 0 $SECONDS" >>"$R/faults-cycles.txt"
	for ((c = 1; c <= cycles; c++)); do
		t0=$SECONDS
		from=$(wc -l <"$R/cycles-reader.log")
		unload_vivid || bad+=("cycle $c: vivid did not unload")
		# Wall-time limits far above the measured 6-20 s per cycle: only a
		# device that never switches fails them.
		wait_kind card 5 "$from" 120 || bad+=("cycle $c: no placeholder frames")
		expect_signal lost "cycle $c, the camera gone"
		from=$(wc -l <"$R/cycles-reader.log")
		cam=$(vm_load_vivid) || bad+=("cycle $c: vivid did not load")
		v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true
		wait_kind camera 5 "$from" 300 || bad+=("cycle $c: no camera frames after the replug")
		expect_signal ok "cycle $c, after the replug"
		cards=$(grep -c ' card ' "$R/cycles-reader.log") || cards=0
		cams=$(grep -c ' camera ' "$R/cycles-reader.log") || cams=0
		echo "$c $(sample) $cards $cams $((SECONDS - t0))" >>"$R/faults-cycles.txt"
		kill -0 "$reader" 2>/dev/null || { bad+=("cycle $c: the reader stopped"); break; }
	done
	sed 's/^/#   /' "$R/faults-cycles.txt"
	if ((${#bad[@]} == 0)); then
		ok "$cycles unplug/replug cycles: placeholder frames and SIGNAL lost while vivid is gone, camera frames and SIGNAL ok after"
	else
		not_ok "$cycles unplug/replug cycles" "${bad[@]}"
	fi
	check "the reader saw no error" bash -c "! grep -q '^END' '$R/cycles-reader.log'"
	# Cycle 1 is the warm-up (the first reconnect allocates what later ones
	# reuse). The heap is sampled while the reader streams, so what one
	# frame has in flight comes and goes; 256 KiB is far above that and
	# below what one lost converter or queue per reconnect would add over
	# 3 cycles. Not RSS: it also counts the camera's buffers mapped from
	# vivid, and moved by 1.6-2.2 MiB from cycle 1 to 2 in two runs.
	check "daemon fd count flat after cycle 1, heap in use within 256 KiB of cycle 1's" \
		awk 'NR == 3 { fd = $2; heap = $3 } NR > 3 { if ($2 != fd || $3 !~ /^[0-9]+$/ ||
			$3 - heap > 262144) bad = 1 } END { exit bad }' "$R/faults-cycles.txt"
	check "daemon alive after the cycles" kill -0 "$uvc_pid"
}

for part in $parts; do
	case $part in
	parked) part_parked ;;
	daemon-kill) part_daemon_kill ;;
	unplug) part_unplug ;;
	*) bail_out "V4L2CUSE_TEST_FAULT_PARTS: unknown part '$part'" ;;
	esac
done
diag "t=${SECONDS}s: done"
