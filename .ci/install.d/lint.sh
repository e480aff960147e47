# Sourced by .ci/test after .ci/lib.sh: the linters of the lint stage
# (.ci/stages/lint.sh), pinned. They install into $(go env GOPATH)/bin.
staticcheck_version=v0.8.2 # honnef.co/go/tools 2026.2.2, for Go 1.26
deadcode_version=v0.52.0   # golang.org/x/tools/cmd/deadcode
gobin=$(go env GOPATH)/bin
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}"; then
	log "go install staticcheck@$staticcheck_version"
	go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi
if [ ! -x "$gobin/deadcode" ] || ! go version -m "$gobin/deadcode" | grep -q "golang.org/x/tools.*$deadcode_version"; then
	log "go install deadcode@$deadcode_version"
	go install "golang.org/x/tools/cmd/deadcode@$deadcode_version"
fi
