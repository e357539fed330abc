#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Churn soak (issue 8): two pattern devices with several formats and sizes,
# 8 clients of tests/vm/churn-client.c (per device two read() clients and two
# MMAP clients under v4l2cuse-run) looping open, enumerate, random S_FMT
# (sometimes a bogus one), S_PARM, a few frames checked, close, random pause.
# Two runs of the same churn, one after the other in the same VM:
#
#  asan   the ASan+UBSan daemon (daemon/v4l2cuse of the build dir
#         V4L2CUSE_TEST_ASAN_BUILD, default build-asan in the checkout,
#         -Db_sanitize=address,undefined; tools/dev.sh build-asan) for
#         V4L2CUSE_TEST_CHURN_SECONDS (default 90): 0 client errors, every
#         client iterated and got frames, the daemon's fd count back to its
#         value after the warm-up, 0 sanitizer reports, and LeakSanitizer
#         clean at the SIGTERM exit (status 0). Its heap is not checked:
#         ASan's allocator keeps freed memory in quarantine and grows its
#         own bookkeeping, so its RSS says nothing about the daemon's.
#  plain  the normal build (daemon/v4l2cuse), V4L2CUSE_TEST_CHURN_ROUNDS
#         (default 3) rounds of V4L2CUSE_TEST_CHURN_ROUND_SECONDS (default
#         30) after a warm-up with the same 8 clients: the same client and
#         fd checks, and the daemon's live heap flat. The heap is read with
#         `v4l2cuse-ctl stats` (heap-in-use-bytes: glibc's mallinfo2(),
#         exact) at idle points, when no client is left: after the warm-up
#         and after each round. See heap_bound below.
#
# V4L2CUSE_TEST_CHURN_RUNS picks the runs (default "asan plain"); the
# published figures come from 600 s and 10 x 30 s runs. A sampler writes
# churn-samples-RUN.csv every V4L2CUSE_TEST_CHURN_SAMPLE seconds (default 5):
# time, phase, fds, VmRSS, RssAnon, RssShmem (the buffers' memfds: up and
# down with streams), threads; the plain run's idle points go to
# churn-heap.csv. Client summaries: churn-clients-RUN.log; the daemon's (and
# the sanitizers') output: daemon-RUN.log.
set -euo pipefail
. "$V4L2CUSE_SRC/tests/vm/lib.sh"

ctl=$V4L2CUSE_BUILD/daemon/v4l2cuse-ctl
run=$V4L2CUSE_BUILD/preload/v4l2cuse-run
client=$V4L2CUSE_BUILD/tests/vm/churn-client
R=$V4L2CUSE_RESULTS
T=$(mktemp -d)
secs=${V4L2CUSE_TEST_CHURN_SECONDS:-90}
rounds=${V4L2CUSE_TEST_CHURN_ROUNDS:-3}
round_s=${V4L2CUSE_TEST_CHURN_ROUND_SECONDS:-30}
every=${V4L2CUSE_TEST_CHURN_SAMPLE:-5}
seed=${V4L2CUSE_TEST_CHURN_SEED:-1}
runs=${V4L2CUSE_TEST_CHURN_RUNS:-asan plain}
asan_bin=${V4L2CUSE_TEST_ASAN_BUILD:-$V4L2CUSE_SRC/build-asan}/daemon/v4l2cuse
phase_file=$T/phase

[[ -x $client ]] || bail_out "$client is not built"
[[ -x $ctl ]] || bail_out "$ctl is not built"
if [[ " $runs " == *" asan "* ]]; then
	[[ -x $asan_bin ]] || bail_out "$asan_bin is not built (tools/dev.sh build-asan)"
	# An uninstrumented daemon would pass the asan run unchecked. ASan's
	# entry point is a dynamic import (gcc) or a symbol of the binary (clang).
	grep -qa __asan_init "$asan_bin" || bail_out "$asan_bin is not an ASan build (no __asan_init)"
fi
vm_modprobe cuse
vm_wait_node /dev/cuse 10

cat >"$T/churn.conf" <<CONF
[daemon]
control-socket = $T/ctl.sock
[device a]
node = video42
source = pattern,sizes=160x120+320x240,formats=YUYV+NV12+RGB3+MJPG+GREY
[device b]
node = video43
source = pattern:smpte,sizes=176x144+320x180,formats=UYVY+YU12+XR24+RGBP+MJPG,box=1
CONF
export V4L2CUSE_CTL_SOCKET=$T/ctl.sock

# stop PID: kill it if it is still there.
stop()
{
	kill "$1" 2>/dev/null || true
}

# --- the daemon's figures --------------------------------------------------------

# daemon_fds: the daemon's open fds.
daemon_fds()
{
	find /proc/"$daemon_pid"/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# wait_fds N: until the daemon has N fds again (30 s); prints the count.
wait_fds()
{
	local end=$((SECONDS + 30)) n
	while n=$(daemon_fds) && ((n != $1 && SECONDS < end)); do
		sleep 0.5
	done
	echo "$n"
}

# sample: one line of churn-samples-RUN.csv.
sample()
{
	local k v rss=0 anon=0 shm=0 thr=0 phase
	while read -r k v _; do
		case $k in
		VmRSS:) rss=$v ;;
		RssAnon:) anon=$v ;;
		RssShmem:) shm=$v ;;
		Threads:) thr=$v ;;
		esac
	done </proc/"$daemon_pid"/status || return 1
	read -r phase <"$phase_file"
	echo "$((SECONDS - t_start)),$phase,$(daemon_fds),$rss,$anon,$shm,$thr"
}

# idle_sample: a sample at an idle point, into the CSV; prints its RssAnon.
idle_sample()
{
	local l
	l=$(sample) || return 1
	echo "$l" >>"$csv"
	cut -d, -f5 <<<"$l"
}

# run_clients SECONDS N SEED LOG: N clients (N <= 8) for SECONDS, their
# output appended to LOG; returns the number that failed.
run_clients()
{
	local s=$1 n=$2 sd=$3 log=$4 i dev pids=() failed=0
	for ((i = 0; i < n; i++)); do
		dev=/dev/video$((42 + i % 2))
		if (((i / 2) % 2 == 0)); then
			timeout $((s + 120)) "$client" $dev "$s" read $((sd * 100 + i)) \
				>"$T/client-$i.out" 2>&1 &
		else
			timeout $((s + 120)) "$run" "$client" $dev "$s" mmap $((sd * 100 + i)) \
				>"$T/client-$i.out" 2>&1 &
		fi
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		if ! wait "${pids[i]}"; then
			failed=$((failed + 1))
		fi
		cat "$T/client-$i.out" >>"$log"
	done
	return $failed
}

# client_totals LOG: one line summing the clients' result lines in LOG.
client_totals()
{
	awk '/^churn-client dev=/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			n++; it += v["iterations"]; fr += v["frames"]; er += v["errors"]; busy += v["busy"]
			bog += v["bogus"]; ec += v["early_close"]
			if (v["mode"] == "read") rf += v["frames"]; else mf += v["frames"]
			if (v["iterations"] < 1 || v["frames"] < 1) idle++
		}
		END { printf "clients=%d iterations=%d frames=%d read_frames=%d mmap_frames=%d " \
			"errors=%d busy=%d bogus=%d early_close=%d idle_clients=%d\n",
			n, it, fr, rf, mf, er, busy, bog, ec, idle }' "$1"
}

# check_clients RUN DESC FAILED LOG N: the client checks of a churn.
check_clients()
{
	local name=$1 desc=$2 failed=$3 log=$4 n=$5 totals
	totals=$(client_totals "$log")
	diag "$name churn: $totals"
	echo "$name $totals" >>"$R/churn-totals.txt"
	if ((failed == 0)) && [[ $totals =~ clients=$n\ .*errors=0\ .*idle_clients=0 ]]; then
		ok "$name: $desc: 0 errors, every client got frames"
	else
		not_ok "$name: $desc: 0 errors, every client got frames" "$failed clients failed; $totals" \
			"$(grep -v '^churn-client dev=' "$log" | head -20)"
	fi
	if [[ $totals =~ read_frames=([0-9]+)\ mmap_frames=([0-9]+) ]] &&
		((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] > 0)); then
		ok "$name: frames by read() and by mmap ($totals)"
	else
		not_ok "$name: frames by read() and by mmap" "$totals"
	fi
}

# start_daemon RUN BINARY: the daemon of a run and its sampler.
start_daemon()
{
	local name=$1 bin=$2 n
	[[ -x $bin ]] || bail_out "$bin is not built (needs -Dvm-tests=enabled)"
	"$bin" --config "$T/churn.conf" >"$R/daemon-$name.log" 2>&1 &
	daemon_pid=$!
	vm_on_exit stop "$daemon_pid"
	for n in /dev/video42 /dev/video43; do
		vm_wait_node $n 120 || bail_out "$n did not appear: $(tail -5 "$R/daemon-$name.log")"
	done
	csv=$R/churn-samples-$name.csv
	echo idle >"$phase_file"
	echo "t_s,phase,fds,vmrss_kib,rssanon_kib,rssshmem_kib,threads" >"$csv"
	t_start=$SECONDS
	(
		while kill -0 "$daemon_pid" 2>/dev/null; do
			sample >>"$csv" || break
			sleep "$every"
		done
	) &
	sampler_pid=$!
	vm_on_exit stop "$sampler_pid"
}

# stop_daemon RUN: SIGTERM; its exit status must be 0 (ASan: after LeakSanitizer).
stop_daemon()
{
	local name=$1 st=0
	stop "$sampler_pid"
	wait "$sampler_pid" 2>/dev/null || true
	kill -TERM "$daemon_pid"
	timeout 120 tail --pid="$daemon_pid" -f /dev/null || true
	wait "$daemon_pid" || st=$?
	if ((st == 0)); then
		ok "$name: the daemon exits 0 on SIGTERM"
	else
		not_ok "$name: the daemon exits 0 on SIGTERM" "status $st" \
			"$(tail -20 "$R/daemon-$name.log")"
	fi
}

# check_fds RUN FDS0: the fd count is FDS0 again once the clients are gone.
check_fds()
{
	local fds1
	fds1=$(wait_fds "$2")
	if ((fds1 == $2)); then
		ok "$1: daemon fds after the churn == after the warm-up ($2)"
	else
		not_ok "$1: daemon fds after the churn == after the warm-up" "$2 -> $fds1" \
			"$(ls -l /proc/"$daemon_pid"/fd | tail -n +2)"
	fi
}

# --- asan: sanitizer reports and a clean exit --------------------------------------

run_asan()
{
	local warm_failed=0 churn_failed=0 fds0 reports anon0 anon1
	# Reports go to stderr (daemon-asan.log): a log_path file could be
	# refused by the daemon's own sandbox. The quarantine (freed memory ASan
	# holds back to catch use-after-free, 256 MiB by default) is capped at
	# 4 MiB: the guest has 2 GiB for everything.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=4:malloc_context_size=20 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0 \
		start_daemon asan "$asan_bin"
	sleep "$every"
	echo warmup >"$phase_file"
	run_clients 15 4 "$seed" "$R/churn-warmup-asan.log" || warm_failed=$?
	echo idle >"$phase_file"
	vm_wait_idle >/dev/null || true
	fds0=$(daemon_fds)
	anon0=$(idle_sample)
	diag "asan: after the warm-up: $fds0 fds, RssAnon $anon0 KiB"
	if ((warm_failed == 0)); then
		ok "asan: warm-up: 4 clients, 0 errors"
	else
		not_ok "asan: warm-up: 4 clients, 0 errors" "$warm_failed clients failed" \
			"$(head -20 "$R/churn-warmup-asan.log")"
	fi

	echo churn >"$phase_file"
	run_clients "$secs" 8 $((seed + 1)) "$R/churn-clients-asan.log" || churn_failed=$?
	echo idle >"$phase_file"
	sed 's/^/#   /' "$R/churn-clients-asan.log"
	check_clients asan "8 clients churned ${secs}s" "$churn_failed" "$R/churn-clients-asan.log" 8
	if ! vm_wait_idle >/dev/null; then
		not_ok "asan: the daemon lets go of every client after the churn"
	fi
	check_fds asan "$fds0"
	anon1=$(idle_sample)
	diag "asan: $(($(wc -l <"$csv") - 1)) samples in churn-samples-asan.csv; fd range" \
		"during the churn: $(awk -F, '$2 == "churn" { if (!n++ || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
			END { print lo "-" hi }' "$csv"); RssAnon after the warm-up $anon0 KiB, after" \
		"the churn $anon1 KiB (ASan's allocator and quarantine: a figure, not checked)"

	stop_daemon asan
	reports=$(grep -cE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|SUMMARY: (Address|Undefined|Leak)' \
		"$R/daemon-asan.log") || reports=0
	if ((reports == 0)); then
		ok "asan: 0 sanitizer reports (ASan, UBSan, LeakSanitizer)"
	else
		not_ok "asan: 0 sanitizer reports" "$reports lines; see daemon-asan.log" \
			"$(grep -E -A12 'ERROR: |runtime error:' "$R/daemon-asan.log" | head -40)"
	fi
}

# --- plain: the daemon's own heap -------------------------------------------------

# idle_heap LABEL: wait until no client is left, then append the heap in
# use to churn-heap.csv and print it (bytes).
idle_heap()
{
	local s heap
	s=$(vm_wait_idle) || return 1
	heap=$(vm_stat heap-in-use-bytes <<<"$s")
	[[ $heap =~ ^[0-9]+$ ]] || return 1
	echo "$1,$((SECONDS - t_start)),$heap,$(vm_stat heap-free-bytes <<<"$s"),$(daemon_fds),$(idle_sample)" \
		>>"$R/churn-heap.csv"
	echo "$heap"
}

run_plain()
{
	local failed=0 fds0 h0 h r growth heap_bound loops
	# The C library's caches of freed memory, per thread (tcache) and in
	# GLib 2.74's slice allocator (magazines), count as "in use" to
	# mallinfo2() and change with what the last requests freed: off, so
	# that heap-in-use-bytes is exactly what the daemon's code holds.
	GLIBC_TUNABLES=glibc.malloc.tcache_count=0 G_SLICE=always-malloc \
		start_daemon plain "$V4L2CUSE_BUILD/daemon/v4l2cuse"
	echo "point,t_s,heap_in_use_bytes,heap_free_bytes,fds,rssanon_kib" >"$R/churn-heap.csv"
	h=$(idle_heap start) || bail_out "plain: no heap-in-use-bytes in v4l2cuse-ctl stats"
	diag "plain: heap in use at start: $h bytes"

	# The warm-up has the churn's 8 clients: whatever grows to the size of
	# the busiest moment (hash tables, arrays, GLib's main-loop tables)
	# grows here, not later.
	sleep "$every"
	echo warmup >"$phase_file"
	run_clients "$round_s" 8 $((seed + 10)) "$R/churn-warmup-plain.log" || failed=$?
	echo idle >"$phase_file"
	h0=$(idle_heap warmup) || bail_out "plain: the daemon is not idle after the warm-up"
	fds0=$(daemon_fds)
	diag "plain: after the warm-up: $fds0 fds, heap in use $h0 bytes"
	check_clients plain "warm-up, 8 clients ${round_s}s" "$failed" "$R/churn-warmup-plain.log" 8

	failed=0
	for ((r = 1; r <= rounds; r++)); do
		echo churn >"$phase_file"
		run_clients "$round_s" 8 $((seed + 10 + r)) "$R/churn-clients-plain.log" ||
			failed=$((failed + $?))
		echo idle >"$phase_file"
		h=$(idle_heap "round $r") || { not_ok "plain: the daemon is idle after round $r"; break; }
		diag "plain: after round $r: heap in use $h bytes ($((h - h0)) from the warm-up)"
	done
	check_clients plain "8 clients churned $rounds x ${round_s}s" "$failed" \
		"$R/churn-clients-plain.log" $((8 * rounds))
	check_fds plain "$fds0"

	# Flat means: after the churn, with no client left, the daemon holds
	# what it held after the warm-up. The figure is exact (no RSS, no
	# allocator caches) but not constant to the byte: containers that
	# grow and shrink with the clients (GLib's hash tables, queues, the
	# main loop's poll table) are left at slightly different sizes.
	# Measured over 20 rounds (10333 client loops): every idle point within
	# +16..+368 bytes of the warm-up's, no trend (docs/reliability.md,
	# Churn). heap_bound is 64 KiB: far above that, and a leak of 64 KiB /
	# (client loops) bytes per loop still fails: ~17 bytes per loop in the
	# CI's 3 x 30 s (~4000 loops on an idle host).
	heap_bound=65536
	loops=$(client_totals "$R/churn-clients-plain.log" | sed 's/.*iterations=\([0-9]*\) .*/\1/')
	growth=$((h - h0))
	diag "plain: heap in use after the warm-up $h0 bytes, after $rounds rounds $h bytes:" \
		"$growth bytes over $loops client loops; idle points: $(tail -n +2 "$R/churn-heap.csv" |
			cut -d, -f1,3 | tr '\n' ' ')"
	if ((growth <= heap_bound)); then
		ok "plain: daemon heap flat: in use after the churn - after the warm-up =" \
			"$growth bytes <= $heap_bound ($loops client loops)"
	else
		not_ok "plain: daemon heap flat (heap in use growth <= $heap_bound bytes)" \
			"$h0 -> $h bytes, growth $growth bytes over $loops client loops" \
			"$(cat "$R/churn-heap.csv")"
	fi
	stop_daemon plain
	check "plain: nothing above a message in its log" \
		bash -c "! grep -E 'CRITICAL|WARNING|ERROR' '$R/daemon-plain.log'"
}

for r in $runs; do
	case $r in
	asan) run_asan ;;
	plain) run_plain ;;
	*) bail_out "V4L2CUSE_TEST_CHURN_RUNS: unknown run '$r'" ;;
	esac
done
