#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A bounded libFuzzer run: run-fuzz.sh FUZZER [SECONDS [LIBFUZZER-ARGS...]]
#
# For FUZZER fuzz-NAME the checked-in seeds are tests/fuzz/corpus/NAME/ and
# the dictionary tests/fuzz/NAME.dict (either may be missing). The seeds are
# read as a second corpus directory, never written: what the run finds goes
# into a work corpus next to the fuzzer (fuzz-NAME-corpus/corpus/), which
# later runs reuse. A crash, leak or timeout leaves crash-* / leak-* /
# timeout-* in fuzz-NAME-corpus/artifacts/ and fails the run; reproduce with
# `FUZZER that-file`. FUZZ_SECONDS overrides SECONDS (default 60).
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
fuzzer=$(readlink -f "$1")
seconds=${FUZZ_SECONDS:-${2:-60}}
shift $(($# < 2 ? $# : 2))
name=$(basename "$fuzzer")
short=${name#fuzz-}
work=$(dirname "$fuzzer")/$name-corpus
mkdir -p "$work/corpus" "$work/artifacts"

dirs=("$work/corpus")
[[ -d $here/corpus/$short ]] && dirs+=("$here/corpus/$short")
opts=()
[[ -f $here/$short.dict ]] && opts+=("-dict=$here/$short.dict")

echo "run-fuzz.sh: $name for ${seconds}s, corpus ${dirs[*]}"
# -rss_limit_mb: a frame of 8192x8192 is legal, but not under ASan here.
# -error_exitcode=1: libFuzzer's default for a crash is 77, which meson
# reads as a skipped test (a crash of fuzz-config passed CI as SKIP).
exec "$fuzzer" "${dirs[@]}" "${opts[@]}" -max_total_time="$seconds" \
	-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="$work/artifacts/" "$@" </dev/null
