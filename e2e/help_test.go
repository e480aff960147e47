package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// e2eTests names, for every command, the tests that run it as a
// subprocess of the built binary: tests of this package, or PKG.TestName
// for a test in package directory PKG that builds and runs the binary
// itself (the debug adapter's DebugClient conformance test).
var e2eTests = map[string]string{
	"analyze":      "TestAnalyzeCore, TestAnalyzeStrippedGzipDebugDir, TestAnalyzeManyCores, TestAnalyzeTextManyGroups, TestAnalyzeLog, TestGPULines",
	"sources":      "TestSources",
	"gpu-lines":    "TestGPULines, TestGPULogREADME",
	"run":          "TestRunTrainREADME, TestRunFlakyREADME, TestRunSaysWhatItKept",
	"hang":         "TestHang, TestHangSaysDeadlock",
	"explain-exit": "TestExplainExit",
	"demo":         "TestDemo",
	"serve":        "TestServe",
	"version":      "TestVersionAndUsage",
	"job":          "TestJobSlurm, TestJobSummaryOf256Threads",
	"dap":          "dap.TestDebugClient",
}

// listedCommands reads the commands `faultline --help` lists.
func listedCommands(t *testing.T) []string {
	t.Helper()
	r := faultline(t, invocation{}, "--help")
	wantExit(t, r, 0)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+faultline ([a-z][a-z-]*)`).FindAllStringSubmatch(r.stdout, -1) {
		seen[m[1]] = true
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	if len(out) < len(e2eTests)-2 { // all but dap and job, whatever else it lists
		t.Fatalf("faultline --help lists %v:\n%s", out, r.stdout)
	}
	return out
}

// TestEveryCommandRunByE2E fails for a command `faultline --help` lists that
// no end-to-end test of this package runs.
func TestEveryCommandRunByE2E(t *testing.T) {
	exists := map[string]bool{}
	for _, fn := range packageFuncs(t) {
		if strings.HasPrefix(fn.Name.Name, "Test") {
			exists[fn.Name.Name] = true
		}
	}
	for _, cmd := range listedCommands(t) {
		if e2eTests[cmd] == "" {
			t.Errorf("command %q is run by no end-to-end test (add one to package e2e and to e2eTests)", cmd)
			continue
		}
		for _, name := range strings.Split(e2eTests[cmd], ", ") {
			if pkg, test, ok := strings.Cut(name, "."); ok {
				if !testInPackage(t, pkg, test) {
					t.Errorf("e2eTests[%q] names %s, which package %s does not have", cmd, name, pkg)
				}
				continue
			}
			if !exists[name] {
				t.Errorf("e2eTests[%q] names %s, which is no test of this package", cmd, name)
			}
		}
		t.Logf("%-14s %s", cmd, e2eTests[cmd])
	}
}

// testInPackage says whether a _test.go file of package directory pkg (in
// the checkout) declares func test.
func testInPackage(t *testing.T, pkg, test string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, pkg, "*_test.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc "+test+"(t *testing.T) {") {
			return true
		}
	}
	return false
}
