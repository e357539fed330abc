#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A bounded libFuzzer run: run-fuzz.sh FUZZER [SECONDS]
#
# Seeds (a few valid files made here: printf for Y4M, ffmpeg for MJPEG when
# it is installed) and a dictionary go into a fresh directory next to the
# fuzzer's build directory (fuzz-<name>-corpus/), which later runs reuse. A
# crash leaves crash-* / leak-* / timeout-* files there and fails the run;
# reproduce with `FUZZER that-file`. FUZZ_SECONDS overrides SECONDS.
set -euo pipefail

fuzzer=$(readlink -f "$1")
seconds=${FUZZ_SECONDS:-${2:-30}}
name=$(basename "$fuzzer")
work=$(dirname "$fuzzer")/$name-corpus
mkdir -p "$work/corpus" "$work/artifacts"

seed_y4m()
{
	local c=$work/corpus
	printf 'YUV4MPEG2 W4 H2 F30:1 Ip A1:1 C420jpeg\nFRAME\nABCDEFGHijkl' >"$c/seed-420"
	printf 'YUV4MPEG2 W3 H3 F25:1 C422\nFRAME\n012345678abcdefABCDEF\nFRAME\n012345678abcdefABCDEF' >"$c/seed-422"
	printf 'YUV4MPEG2 W2 H2 C444alpha XYSCSS=444\nFRAME\n0123456789abcdef' >"$c/seed-444a"
	printf 'YUV4MPEG2 W5 H1 Cmono\nFRAME\nabcdeFRAME xx\n12345' >"$c/seed-mono"
	printf 'YUV4MPEG2 W2 H2 C444\nFRAME\n012345678901\nFRAXE\n012345678901\nFRAME\n012345678901' >"$c/seed-444"
	cat >"$work/dict" <<'DICT'
"YUV4MPEG2 "
"FRAME"
"FRAME\x0a"
" W"
" H"
" F30000:1001"
" A1:1"
" Ip"
" Im"
" C420jpeg"
" C420paldv"
" C422"
" C444"
" C444alpha"
" Cmono"
" C420p10"
" X"
"\x0a"
DICT
}

seed_mjpeg()
{
	local c=$work/corpus
	if command -v ffmpeg >/dev/null; then
		ffmpeg -v error -y -f lavfi -i testsrc=size=16x16:rate=5 -frames:v 3 \
			-c:v mjpeg -f mjpeg "$c/seed-stream" </dev/null || true
		ffmpeg -v error -y -f lavfi -i testsrc=size=8x8:rate=5 -frames:v 1 \
			-c:v mjpeg -f mjpeg "$c/seed-one" </dev/null || true
	fi
	printf '\xff\xd8\xff\xc0\x00\x0b\x08\x00\x02\x00\x02\x01\x01\x11\x00\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\x12\xff\x00\x34\xff\xd0\x56\xff\xd9' >"$c/seed-min"
	cat >"$work/dict" <<'DICT'
"\xff\xd8"
"\xff\xd9"
"\xff\xda"
"\xff\xc0"
"\xff\xc2"
"\xff\xc4"
"\xff\xdb"
"\xff\xdd\x00\x04"
"\xff\xe0"
"\xff\x00"
"\xff\xd0"
"\xff\xff"
DICT
}

case $name in
fuzz-y4m) seed_y4m ;;
fuzz-mjpeg) seed_mjpeg ;;
*) echo "run-fuzz.sh: unknown fuzzer $name" >&2; exit 2 ;;
esac

echo "run-fuzz.sh: $name for ${seconds}s, corpus $work/corpus"
# -rss_limit_mb: a frame of 8192x8192 is legal, but not under ASan here.
exec "$fuzzer" "$work/corpus" -dict="$work/dict" -max_total_time="$seconds" \
	-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" </dev/null
