#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Fault tests (issue 8), with the clients of tests/vm/fault-client.c:
#  1. a client SIGKILLed while parked in DQBUF (shim), in read(), in poll():
#     reaped within 1 s, never in D state after the kill, and the daemon
#     serves the next client;
#  2. the daemon SIGKILLed while 3 clients stream (read(), mmap through
#     v4l2cuse-run, a poll() loop): each ends with an error within 10 s
#     (errno or revents recorded), none hangs; a supervisor restarts the
#     daemon (as the unit's Restart=on-failure would), the node is back and
#     clients that reopen stream again from sequence 0;
#  3. a uvc passthrough of vivid with a placeholder, one reader streaming
#     through V4L2CUSE_TEST_FAULT_CYCLES (default 3; 20 for the figures)
#     unplug/replug cycles of vivid: placeholder frames while it is gone,
#     camera frames after, and the daemon's fd count flat and VmRSS within
#     a bound, sampled every cycle (series in faults-cycles.txt).
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

vm_require v4l2-ctl || bail_out "tools missing"

daemon=$V4L2CUSE_BUILD/daemon/v4l2cuse
run=$V4L2CUSE_BUILD/preload/v4l2cuse-run
client=$V4L2CUSE_BUILD/tests/vm/fault-client
R=$V4L2CUSE_RESULTS
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

# park_kill DESC CMD...: CMD parks after its first frame and is SIGKILLed.
park_kill()
{
	local desc=$1 out line ms d
	shift
	out=$(timeout 120 "$client" park-kill "$@" 2>&1) || true
	sed 's/^/#   /' <<<"$out"
	line=$(grep '^parked-states=' <<<"$out") || line=
	if [[ $line =~ after-kill-states=([^ ]*)\ reap-ms=([0-9.]+)\ d-ms=([0-9.]+) ]]; then
		ms=${BASH_REMATCH[2]}
		d=${BASH_REMATCH[3]}
		diag "$desc: $line"
		if [[ ${ms%.*} -lt 1000 ]]; then
			ok "$desc: reaped ${ms} ms after SIGKILL"
		else
			not_ok "$desc: reaped within 1 s of SIGKILL" "$line"
		fi
		# Parked means S (an interruptible wait). D after the kill is the
		# task on its way out (closing the node is a FLUSH/RELEASE round
		# trip to the daemon); D for a second would be a wait that SIGKILL
		# cannot break.
		if [[ $line =~ parked-states=[^D\ ]+\  && ${d%.*} -lt 1000 ]]; then
			ok "$desc: not in D state while parked, ${d} ms in D after the kill"
		else
			not_ok "$desc: no D state" "$line"
		fi
	else
		not_ok "$desc: parked and reaped" "$out"
	fi
}

# next_client: one frame for a new reader (its first one is due at once).
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
# camera's would), then rmmod once the daemon has let go of it.
unload_vivid()
{
	local i
	echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind || return 1
	for ((i = 0; i < 100; i++)); do
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

# sample: "FDS RSS_KB" of the uvc daemon.
sample()
{
	echo "$(find /proc/"$uvc_pid"/fd -mindepth 1 -maxdepth 1 | wc -l)" \
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
	cat >"$T/slow.conf" <<-'CONF'
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
	park_kill "parked in DQBUF (shim, MMAP)" "$run" "$client" dqbuf /dev/video42
	next_client "the DQBUF kill"
	park_kill "parked in read()" "$client" read /dev/video42
	next_client "the read() kill"
	park_kill "parked in poll()" "$client" poll /dev/video42
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
	# Each client must end on its own: a timeout-guarded wait of 10 s.
	end=$((SECONDS + 10))
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
				((st == 3 && ms < 10000)); then
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
	# then the restarted daemon answers an ioctl on each.
	back=false
	end=$((SECONDS + 120))
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
	if grep -q '^DONE' <<<"$out" && [[ $seqs == "0 1 2 3 4 " ]]; then
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
	"$daemon" --device video43 --source "uvc:$cam,retry_ms=200" --size 320x180 --format YUYV \
		--fps 15 >"$R/daemon-uvc.log" 2>&1 &
	uvc_pid=$!
	vm_on_exit stop_pid "$uvc_pid"
	vm_wait_node /dev/video43 90 || bail_out "/dev/video43 did not appear: $(tail -5 "$R/daemon-uvc.log")"
	timeout $((cycles * 120 + 300)) "$client" read /dev/video43 --classify >"$R/cycles-reader.log" 2>&1 &
	reader=$!
	vm_on_exit stop_pid "$reader"
	wait_kind camera 10 0 120 || bail_out "the reader gets no camera frames: $(tail -3 "$R/cycles-reader.log")"
	echo "cycle fds rss_kb card_frames camera_frames seconds" >"$R/faults-cycles.txt"
	echo "0 $(sample) 0 0 $SECONDS" >>"$R/faults-cycles.txt"
	bad=()
	for ((c = 1; c <= cycles; c++)); do
		t0=$SECONDS
		from=$(wc -l <"$R/cycles-reader.log")
		unload_vivid || bad+=("cycle $c: vivid did not unload")
		wait_kind card 5 "$from" 60 || bad+=("cycle $c: no placeholder frames")
		from=$(wc -l <"$R/cycles-reader.log")
		cam=$(vm_load_vivid) || bad+=("cycle $c: vivid did not load")
		v4l2-ctl -d "$cam" --set-ctrl osd_text_mode=2 >/dev/null 2>&1 || true
		wait_kind camera 5 "$from" 90 || bad+=("cycle $c: no camera frames after the replug")
		cards=$(grep -c ' card ' "$R/cycles-reader.log") || cards=0
		cams=$(grep -c ' camera ' "$R/cycles-reader.log") || cams=0
		echo "$c $(sample) $cards $cams $((SECONDS - t0))" >>"$R/faults-cycles.txt"
		kill -0 "$reader" 2>/dev/null || { bad+=("cycle $c: the reader stopped"); break; }
	done
	sed 's/^/#   /' "$R/faults-cycles.txt"
	if ((${#bad[@]} == 0)); then
		ok "$cycles unplug/replug cycles: placeholder frames while vivid is gone, camera frames after"
	else
		not_ok "$cycles unplug/replug cycles" "${bad[@]}"
	fi
	check "the reader saw no error" bash -c "! grep -q '^END' '$R/cycles-reader.log'"
	# Cycle 1 is the warm-up (the first reconnect allocates what later ones reuse).
	check "daemon fd count flat after cycle 1, VmRSS within 2 MiB of cycle 1's" \
		awk 'NR == 3 { fd = $2; rss = $3 } NR > 3 { if ($2 != fd || $3 - rss > 2048) bad = 1 }
		     END { exit bad }' "$R/faults-cycles.txt"
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
