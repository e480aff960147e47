package dap_test

import (
	"os/exec"
	"path/filepath"
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

// TestDebugClientOffline: the launch argument "offline": true keeps the
// adapter off the network, through Microsoft's DebugClient and the built
// `faultline dap`. The program built here is stripped and its sources
// moved away; Debian's debuginfod on 127.0.0.1 (private network
// namespace) serves both, behind a proxy counting requests. Offline, the
// session opens with no request and the top frame has no source; the same
// launch without "offline" fetches the debug file and the source (the
// positive control).
func TestDebugClientOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs debuginfod and node")
	}
	if !debuginfodtest.InNetNS(t) {
		return
	}
	p := debuginfodtest.StartSourcesAway(t)
	count := p.Server.Count(t)
	t.Setenv("DEBUGINFOD_URLS", count.URL)
	stripped := filepath.Join(t.TempDir(), "crash")
	if out, err := exec.Command("strip", "--strip-debug", "-o", stripped, p.Exe).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	runDebugClient(t, tmp, []conformanceCase{{
		Name:           "offline: no debuginfod",
		Launch:         map[string]any{"coreFile": p.Core, "program": stripped, "offline": true},
		ExpectNoSource: true,
	}})
	if got := count.Requests(); len(got) != 0 {
		t.Fatalf(`launch "offline": true: %d debuginfod requests: %q`, len(got), got)
	}
	runDebugClient(t, tmp, []conformanceCase{{
		Name:         "online: debug file and source from debuginfod",
		Launch:       map[string]any{"coreFile": p.Core, "program": stripped},
		ExpectSource: p.Fetched, ExpectLine: crashbuild.CrashLine,
		ExpectOrigin: "read-only copy fetched from debuginfod " + count.URL,
		ExpectText:   strings.Split(crashbuild.CrashSource, "\n")[crashbuild.CrashLine-1],
	}})
	if got := count.Requests(); len(got) == 0 {
		t.Fatal("without offline: no debuginfod request (the positive control)")
	}
}
