#!/usr/bin/env bash
# The benchmark stage: bench/heldout.sh on issue 25's three workloads (a
# small C++ crash, python3 with torch 1.13, bench/gen's 258-thread core),
# faultline cold and warm against gdb and eu-stack -i -s in the same run,
# alternating, FAULTLINE_BENCH_ROUNDS rounds (default 3). It prints the
# table with each target marked met or MISSED between "=== report" lines
# (.ci/test shows them). A benchmark, not a timed test: the timings never
# fail it (the machine may be loaded); it fails when a workload cannot be
# built or measured, or faultline's frames disagree with gdb's. Programs,
# cores and bench/gen's corpus (about 10 minutes to build on 2 cores, once)
# are cached by content hash in $FAULTLINE_TEST_CACHE/bench. Installed by
# .ci/install.d/bench.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${FAULTLINE_TEST_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/faultline-test}"
export FAULTLINE_BENCH_CACHE=$FAULTLINE_TEST_CACHE/bench
mkdir -p "$FAULTLINE_BENCH_CACHE"
log=$(mktemp "${TMPDIR:-/tmp}/faultline-bench.XXXXXX")
HELDOUT_WORKLOADS="small torch big" HELDOUT_TOOLS="gdb eu-stack" HELDOUT_ROUNDS=${FAULTLINE_BENCH_ROUNDS:-3} \
	nice -n 5 bash bench/heldout.sh >"$log" 2>&1
rc=$?
cat "$log"
echo "=== report"
sed -n '/^issue 25 /,$p' "$log" | grep -v '^heldout: '
echo "=== end report"
rows=$(sed -n '/^issue 25 /,/^$/p' "$log" | grep -cE '^(small|torch|big) +\|')
rm -f "$log"
passed=0 failed=0
if [ $rc -eq 0 ] && [ "$rows" -eq 3 ]; then passed=1; else failed=1; fi
[ "$rows" -eq 3 ] || echo "the table has $rows of its 3 workloads"
echo "bench: $passed passed, $failed failed"
[ $failed -eq 0 ]
