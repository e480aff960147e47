#!/usr/bin/env bash
# The upstream-review benchmark stage (issue 22): bench/gitsrc's
# BenchmarkUpstreamCurlSize reviews a crash in a generated history of curl's
# size (40,000 commits, 10,000 after the tag; generated once into the test
# cache, a few minutes) cold, warm and offline, against git clone in the same
# run, and prints the figures with the load average. It fails when the review
# differs from git log / git log -L, when the warm run fetches, or when a
# target (cold ≤ 30 s and ≤ 150 MiB, warm ≤ 3 s, offline ≤ 2 s) is missed.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${FAULTLINE_TEST_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/faultline-test}"
export FAULTLINE_BENCH_DIR=${FAULTLINE_BENCH_DIR:-$FAULTLINE_TEST_CACHE/bench}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
go test ./bench/gitsrc -run '^$' -bench UpstreamCurlSize -benchtime 1x -count 1 -timeout 40m -v || status=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $status -eq 0 ]; then
	echo "gitsrc-bench: 1 passed, 0 failed"
else
	echo "gitsrc-bench: 0 passed, 1 failed"
fi
exit $status
