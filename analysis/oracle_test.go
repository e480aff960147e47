package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/internal/testgz"
)

const corpus = "../testdata/native"

type corpusCase struct {
	Name       string   `json:"name"`
	Binary     string   `json:"binary"`
	Core       string   `json:"core"`
	SearchDirs []string `json:"searchDirs"`
	Signal     string   `json:"signal"`
	SystemLibs []struct {
		Path    string `json:"path"`
		BuildID string `json:"buildId"`
	} `json:"systemLibraries"`
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Cases []corpusCase }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) < 10 {
		t.Fatalf("manifest lists %d cases, want the whole corpus", len(m.Cases))
	}
	return m.Cases
}

// checkSystemLibs fails when this machine's libraries are not the ones the
// cores were made with: then neither gdb nor faultline can symbolize them
// (regenerate with testdata/native/gen.sh).
func checkSystemLibs(t *testing.T, c corpusCase) {
	t.Helper()
	for _, l := range c.SystemLibs {
		o, err := object.OpenObject(l.Path)
		if err != nil {
			t.Fatalf("%s: %v", l.Path, err)
		}
		got := fmt.Sprintf("%x", o.BuildID())
		o.Close()
		if got != l.BuildID {
			t.Fatalf("%s has build-id %s here but %s in the core: run testdata/native/gen.sh", l.Path, got, l.BuildID)
		}
	}
}

// gdbBacktrace runs the oracle: gdb's `thread apply all bt` on the same core.
func gdbBacktrace(t *testing.T, bin, core string, searchDirs []string) *logs.GDBLog {
	t.Helper()
	args := []string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0"}
	if len(searchDirs) > 0 {
		args = append(args, "-ex", "set solib-search-path "+strings.Join(searchDirs, ":"))
	}
	args = append(args, "-ex", "info threads", "-ex", "thread apply all bt", bin, core)
	cmd := exec.Command("gdb", args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	log, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("parsing gdb output: %v", err)
	}
	return log
}

// TestOracleGDB: for every core of the corpus, the frames faultline reports
// (function, file, line, one entry per inline level, the signal frame) equal
// gdb's bt on the same core, thread for thread, and the thread count equals gdb's.
func TestOracleGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Fatal("gdb is required for the oracle tests (the README's test command installs it)")
	}
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			checkSystemLibs(t, c)
			bin, _ := filepath.Abs(filepath.Join(corpus, c.Binary))
			var dirs []string
			for _, d := range c.SearchDirs {
				a, _ := filepath.Abs(filepath.Join(corpus, d))
				dirs = append(dirs, a)
			}
			core := filepath.Join(t.TempDir(), c.Name+".core")
			testgz.Gunzip(t, filepath.Join(corpus, c.Core), core)
			want := gdbBacktrace(t, bin, core, dirs)

			got, err := analysis.Open(core, analysis.Options{Exe: bin, SearchDirs: dirs})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Threads) != len(want.Threads) {
				t.Fatalf("%d threads, gdb shows %d", len(got.Threads), len(want.Threads))
			}
			if got.Signal == nil || got.Signal.Name != c.Signal {
				t.Errorf("signal %+v, want %s", got.Signal, c.Signal)
			}
			byLWP := map[int]analysis.Thread{}
			for _, th := range got.Threads {
				byLWP[th.ID] = th
			}
			for i, wt := range want.Threads {
				th, ok := byLWP[wt.LWP]
				if !ok {
					t.Errorf("gdb thread %d (LWP %d) missing", wt.Num, wt.LWP)
					continue
				}
				if i == 0 && (!th.Crashed || got.CrashingThreadID != wt.LWP) {
					t.Errorf("crashing thread: got %d, gdb's first thread is LWP %d", got.CrashingThreadID, wt.LWP)
				}
				compareFrames(t, wt, th)
			}
		})
	}
}

func compareFrames(t *testing.T, want logs.GDBThread, got analysis.Thread) {
	t.Helper()
	if d := crashlab.Diff(crashlab.GDBLines(want), crashlab.ModelLines(got)); d != "" {
		t.Errorf("LWP %d: %s", want.LWP, d)
	}
}

// TestGDBLogMatchesCore: gdb's own output, read as a crash log, gives the
// same threads and frames (function, file, line, inline levels) as the core
// it was printed from.
func TestGDBLogMatchesCore(t *testing.T) {
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			checkSystemLibs(t, c)
			bin, _ := filepath.Abs(filepath.Join(corpus, c.Binary))
			var dirs []string
			for _, d := range c.SearchDirs {
				dirs = append(dirs, filepath.Join(corpus, d))
			}
			fromCore, err := analysis.Open(filepath.Join(corpus, c.Core), analysis.Options{Exe: bin, SearchDirs: dirs})
			if err != nil {
				t.Fatal(err)
			}
			fromLog, err := analysis.Open(filepath.Join(corpus, "cores", c.Name+".gdb.txt"), analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if fromLog.Dump.Format != "gdb-log" {
				t.Fatalf("format %q", fromLog.Dump.Format)
			}
			if len(fromLog.Threads) != len(fromCore.Threads) || fromLog.CrashingThreadID != fromCore.CrashingThreadID {
				t.Fatalf("log: %d threads, crashing %d; core: %d threads, crashing %d",
					len(fromLog.Threads), fromLog.CrashingThreadID, len(fromCore.Threads), fromCore.CrashingThreadID)
			}
			if (fromLog.Signal == nil) != (fromCore.Signal == nil) || fromLog.Signal != nil && fromLog.Signal.Name != fromCore.Signal.Name {
				t.Errorf("signal: log %+v, core %+v", fromLog.Signal, fromCore.Signal)
			}
			byID := map[int]analysis.Thread{}
			for _, th := range fromCore.Threads {
				byID[th.ID] = th
			}
			for _, lt := range fromLog.Threads {
				ct := byID[lt.ID]
				if len(lt.Frames) != len(ct.Frames) {
					t.Errorf("thread %d: log %d frames, core %d", lt.ID, len(lt.Frames), len(ct.Frames))
					continue
				}
				for i, lf := range lt.Frames {
					cf := ct.Frames[i]
					if lf.Function != cf.Function || lf.File != cf.File || lf.Line != cf.Line || lf.Inlined != cf.Inlined {
						t.Errorf("thread %d #%d: log %s %s:%d inlined=%v, core %s %s:%d inlined=%v", lt.ID, i,
							lf.Function, lf.File, lf.Line, lf.Inlined, cf.Function, cf.File, cf.Line, cf.Inlined)
						break
					}
				}
			}
		})
	}
}
