package analysis_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// pythonCase is one entry of testdata/python/manifest.json (written by
// testdata/python/gen.sh).
type pythonCase struct {
	Name         string `json:"name"`
	Interpreter  string `json:"interpreter"`
	Script       string `json:"script"`
	CrashLine    int    `json:"crashLine"`
	Core         string `json:"core"`
	Faulthandler string `json:"faulthandler"`
	// BuildIDs and SearchDirs name paths relative to testdata/python
	// when not absolute (trixie's 3.13, unpacked there by
	// install-py313.sh).
	BuildIDs   map[string]string `json:"buildIds"`
	SearchDirs []string          `json:"searchDirs"`
}

// pythonPath resolves a manifest path: relative ones are under
// testdata/python.
func pythonPath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(pythonData, p)
}

const pythonData = "../testdata/python"

func pythonCases(t *testing.T) []pythonCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pythonData, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Cases []pythonCase }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Cases
}

var buildIDRe = regexp.MustCompile(`Build ID: ([0-9a-f]+)`)

// interpreterMatches says whether this machine's interpreter files are the
// ones the core was made with (a core can only be read against those).
func interpreterMatches(t *testing.T, c pythonCase) bool {
	for path, id := range c.BuildIDs {
		out, err := exec.Command("readelf", "-n", pythonPath(path)).Output()
		if err != nil {
			t.Logf("%s: %v", path, err)
			return false
		}
		if m := buildIDRe.FindSubmatch(out); m == nil || string(m[1]) != id {
			t.Logf("%s is not the build the core was made with (run testdata/python/gen.sh; it runs install-py313.sh)", path)
			return false
		}
	}
	return true
}

// pyFrame is a Python frame as faulthandler prints it: co_name, not
// co_qualname.
type pyFrame struct {
	file     string
	line     int
	function string
}

func modelPythonFrames(th analysis.Thread) []pyFrame {
	var out []pyFrame
	for _, f := range th.Frames {
		if f.Language != "python" {
			continue
		}
		// co_qualname "train_step.<locals>.<lambda>" has co_name "<lambda>".
		name := f.Function[strings.LastIndexByte(f.Function, '.')+1:]
		out = append(out, pyFrame{f.File, f.Line, name})
	}
	return out
}

func logFrames(t logs.PyThread) []pyFrame {
	var out []pyFrame
	for _, f := range t.Frames {
		out = append(out, pyFrame{f.File, f.Line, f.Function})
	}
	return out
}

func framesKey(fs []pyFrame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s@%s:%d\n", f.function, f.file, f.line)
	}
	return b.String()
}

// TestPythonFramesFromCores reads each test core's Python frames and
// compares every thread with what faulthandler printed about the same
// crash, in the same process: same frames, files, lines, in order; the
// crashing thread's first frame in the job's script is the crash line.
func TestPythonFramesFromCores(t *testing.T) {
	for _, pc := range pythonCases(t) {
		t.Run(pc.Name, func(t *testing.T) {
			if !interpreterMatches(t, pc) {
				t.Skip("interpreter differs from the core's")
			}
			core := testgz.GunzipTemp(t, filepath.Join(pythonData, pc.Core), "core")
			// The core names the trixie files where gen.sh's checkout
			// had them; they are found by name in this one's.
			dirs := []string{filepath.Join(pythonData, "bin")}
			for _, d := range pc.SearchDirs {
				dirs = append(dirs, pythonPath(d))
			}
			c, err := analysis.Open(core, analysis.Options{SearchDirs: dirs})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.Problems {
				if strings.Contains(p.Message, "Python") {
					t.Errorf("problem: %s", p.Message)
				}
			}
			f, err := os.Open(filepath.Join(pythonData, pc.Faulthandler))
			if err != nil {
				t.Fatal(err)
			}
			fh, err := logs.ParseFaulthandler(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(fh.Threads) != len(c.Threads) {
				t.Errorf("faulthandler printed %d threads, the core has %d", len(fh.Threads), len(c.Threads))
			}
			// Each run of Python frames sits just above the eval-loop
			// frame that ran it (above its inlined calls, if any).
			for _, th := range c.Threads {
				for i, fr := range th.Frames {
					if fr.Language != "python" || (i+1 < len(th.Frames) && th.Frames[i+1].Language == "python") {
						continue
					}
					j := i + 1
					for j < len(th.Frames) && th.Frames[j].Inlined {
						j++
					}
					if j == len(th.Frames) || !strings.HasPrefix(th.Frames[j].Function, "_PyEval_EvalFrameDefault") {
						t.Errorf("thread %d: Python frame %s is not above _PyEval_EvalFrameDefault", th.ID, fr.Function)
					}
				}
			}
			var crashed *analysis.Thread
			others := map[string]int{}
			for i := range c.Threads {
				if c.Threads[i].ID == c.CrashingThreadID {
					crashed = &c.Threads[i]
				} else {
					others[framesKey(modelPythonFrames(c.Threads[i]))]++
				}
			}
			if crashed == nil {
				t.Fatal("no crashing thread")
			}
			for _, th := range fh.Threads {
				key := framesKey(logFrames(th))
				if th.Current {
					if got := framesKey(modelPythonFrames(*crashed)); got != key {
						t.Errorf("crashing thread: core has\n%s\nfaulthandler has\n%s", got, key)
					}
					continue
				}
				if others[key] == 0 {
					t.Errorf("no thread in the core has faulthandler's stack\n%s", key)
				}
				others[key]--
			}
			// The script line that made the crashing call, and native
			// frames above it (the C function that faulted).
			// The core records the script's absolute path where gen.sh ran
			// it; this checkout may be elsewhere.
			script := "/testdata/python/" + pc.Script
			firstPy := -1
			for i, fr := range crashed.Frames {
				if fr.Language == "python" && strings.HasSuffix(fr.File, script) {
					if fr.Line != pc.CrashLine {
						t.Errorf("first frame in %s is line %d, want %d", pc.Script, fr.Line, pc.CrashLine)
					}
					firstPy = i
					break
				}
			}
			if firstPy < 0 {
				t.Fatalf("no frame of %s in the crashing thread", script)
			}
			native := 0
			for _, fr := range crashed.Frames[:firstPy] {
				if fr.Language == "" && fr.Function != "" {
					native++
				}
			}
			if native == 0 {
				t.Error("no native frames above the Python frames")
			}
			if pc.Script == "crash_ext.py" && !hasFunction(crashed.Frames[:firstPy], "read_sample") {
				t.Error("read_sample (the faulting C function) is not above the crash line")
			}
		})
	}
}

func hasFunction(fs []analysis.Frame, name string) bool {
	for _, f := range fs {
		if f.Function == name {
			return true
		}
	}
	return false
}

// TestFaulthandlerLogAsDump opens faulthandler's output as the dump: its
// crashing thread's culprit is the job's crash line.
func TestFaulthandlerLogAsDump(t *testing.T) {
	for _, pc := range pythonCases(t) {
		t.Run(pc.Name, func(t *testing.T) {
			c, err := analysis.Open(filepath.Join(pythonData, pc.Faulthandler), analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Dump.Format != "faulthandler" || c.Signal == nil || c.Signal.Name != "SIGSEGV" {
				t.Fatalf("dump %+v signal %+v", c.Dump, c.Signal)
			}
			cls := c.Classification
			var th *analysis.Thread
			for i := range c.Threads {
				if c.Threads[i].Crashed {
					th = &c.Threads[i]
				}
			}
			if th == nil || cls == nil || cls.CulpritFrame < 0 {
				t.Fatalf("no crashing thread or culprit: %+v", cls)
			}
			f := th.Frames[cls.CulpritFrame]
			if filepath.Base(f.File) != pc.Script || f.Line != pc.CrashLine || f.Language != "python" {
				t.Errorf("culprit %s:%d (%s), want %s:%d", f.File, f.Line, f.Language, pc.Script, pc.CrashLine)
			}
		})
	}
}

// TestTracebackLogAsDump opens a job log that ended in a chained Python
// exception (testdata/python/logs/exception.txt, from exception.py).
func TestTracebackLogAsDump(t *testing.T) {
	c, err := analysis.Open(filepath.Join(pythonData, "logs", "exception.txt"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Dump.Format != "python-traceback" || len(c.Threads) != 3 {
		t.Fatalf("format %q, %d threads", c.Dump.Format, len(c.Threads))
	}
	cls := c.Classification
	if cls.Message != "RuntimeError: bad config" {
		t.Errorf("message %q", cls.Message)
	}
	th := c.Threads[2]
	if !th.Crashed || th.ID != c.CrashingThreadID {
		t.Fatalf("the final exception's thread is not the crashing one: %+v", th)
	}
	want := lineOf(t, filepath.Join(pythonData, "exception.py"), "# RAISE")
	f := th.Frames[cls.CulpritFrame]
	if f.Function != "load_config" || f.Line != want {
		t.Errorf("culprit %s line %d, want load_config line %d", f.Function, f.Line, want)
	}
	if !strings.HasPrefix(c.Threads[0].Name, "prefetch: KeyError") {
		t.Errorf("thread exception named %q", c.Threads[0].Name)
	}
	if !strings.Contains(strings.Join(cls.Evidence, "\n"), "the direct cause: json.decoder.JSONDecodeError") {
		t.Errorf("evidence lacks the cause: %q", cls.Evidence)
	}
}

func lineOf(t *testing.T, path, marker string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s: no %q", path, marker)
	return 0
}

// TestTextFileNotALog: a text file with no crash in it is a clear error,
// not a core-format complaint.
func TestTextFileNotALog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("epoch 1 loss 0.5\nepoch 2 loss 0.4\n"), 0o644)
	_, err := analysis.Open(p, analysis.Options{})
	if err == nil || !strings.Contains(err.Error(), "no crash faultline can read") {
		t.Fatalf("err = %v", err)
	}
}
