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
# The Go files to format-check: git's list in a checkout; in the test cache's
# copy of the tree (.ci/corpora.sh: no .git) every .go file but installed
# tools'. An empty list fails: a check of no files would pass whatever the
# files say.
go_files() {
	if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
		git ls-files '*.go'
	else
		find . \( -name .git -o -name node_modules -o -name .tools \) -prune -o -name '*.go' -type f -print
	fi
}
gofmt_check() {
	local files
	mapfile -t files < <(go_files)
	if [ ${#files[@]} -eq 0 ]; then
		echo "no Go files found in $(pwd): nothing to check is a failure"
		return 1
	fi
	gofmt -l "${files[@]}"
}
run "gofmt -l" gofmt_check
run staticcheck "$gobin/staticcheck" ./...
run "deadcode -test" "$gobin/deadcode" -test ./...
echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
