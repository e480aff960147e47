package dap_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/crashbuild"
	"github.com/faultline-dev/faultline/internal/debuginfodtest"
)

// TestDebugClientDebuginfodSource: gdb's last source-lookup step through
// Microsoft's DebugClient and the built `faultline dap`. A program built
// here whose sources were moved away, Debian's debuginfod (started here on
// 127.0.0.1, in a private network namespace) still serving them, no
// workspace: the top frame's source is the copy fetched into the
// debuginfod cache (DEBUGINFOD_CACHE_PATH), its origin naming the server,
// also served by sourceReference (so VS Code shows it read-only) with the
// same text, and the copy is read-only.
func TestDebugClientDebuginfodSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs debuginfod and node")
	}
	if !debuginfodtest.InNetNS(t) {
		return
	}
	p := debuginfodtest.StartSourcesAway(t)
	runDebugClient(t, t.TempDir(), []conformanceCase{{
		Name:         "lookup: no workspace, sources only on debuginfod",
		Launch:       map[string]any{"coreFile": p.Core, "program": p.Exe},
		ExpectSource: p.Fetched, ExpectLine: crashbuild.CrashLine,
		ExpectOrigin: "read-only copy fetched from debuginfod " + p.Server.URL,
		ExpectText:   strings.Split(crashbuild.CrashSource, "\n")[crashbuild.CrashLine-1],
	}})
	p.CheckFetched(t)
}
