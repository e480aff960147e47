#!/usr/bin/env bash
# The lint stage: gofmt, staticcheck and `deadcode -test` must find nothing
# (ARCHITECTURE.md, "Invariants"). The import rules are a Go test
# (internal/archtest). Installed by .ci/install.d/lint.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
gobin=$(go env GOPATH)/bin
passed=0 failed=0
run() {
	local name=$1
	shift
	local out
	out=$("$@" 2>&1)
	if [ $? -eq 0 ] && [ -z "$out" ]; then
		echo "ok   $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		echo "$out" | head -100
		failed=$((failed + 1))
	fi
}
run "gofmt -l" gofmt -l $(git ls-files '*.go')
run staticcheck "$gobin/staticcheck" ./...
run "deadcode -test" "$gobin/deadcode" -test ./...
echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
