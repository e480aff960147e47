package analysis_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

// gdbFrameVars is one frame of `frame apply all info args` / `info locals`.
type gdbFrameVars struct {
	header string
	args   [][2]string
	locals [][2]string
}

var (
	gdbFrameHeader = regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+)`)
	gdbVarLine     = regexp.MustCompile(`^(\S+) = (.*)$`)
)

// gdbValues runs gdb on a core and returns every frame's `info args` and
// `info locals`, with entry values off (only actual values printed).
func gdbValues(t *testing.T, exe, core string) []gdbFrameVars {
	t.Helper()
	var frames []gdbFrameVars
	for pass, cmd := range []string{"info args", "info locals"} {
		out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set print entry-values no",
			"-ex", "set width 0", "-ex", "frame apply all "+cmd, exe, core).CombinedOutput()
		if err != nil {
			t.Fatalf("gdb: %v\n%s", err, out)
		}
		i := -1
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			line := sc.Text()
			if m := gdbFrameHeader.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				i = n
				for len(frames) <= i {
					frames = append(frames, gdbFrameVars{})
				}
				frames[i].header = m[2]
				continue
			}
			m := gdbVarLine.FindStringSubmatch(line)
			if i < 0 || m == nil {
				continue
			}
			kv := [2]string{m[1], m[2]}
			if pass == 0 {
				frames[i].args = append(frames[i].args, kv)
			} else {
				frames[i].locals = append(frames[i].locals, kv)
			}
		}
	}
	return frames
}

// crashProgram compiles src with the given flags into dir and runs it
// there until it dumps core.
func crashProgram(t *testing.T, compiler, src, dir string, flags ...string) (exe, core string) {
	t.Helper()
	exe = filepath.Join(dir, "prog")
	abs, _ := filepath.Abs(filepath.Join("testdata", "values", src))
	args := append(append([]string{"-g"}, flags...), "-o", exe, abs)
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", compiler, args, err, out)
	}
	cmd := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./prog")
	cmd.Dir = dir
	_ = cmd.Run()
	for _, name := range []string{"core", "core." + strconv.Itoa(cmd.ProcessState.Pid())} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return exe, filepath.Join(dir, name)
		}
	}
	core = filepath.Join(dir, "core.gdb")
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "run", "-ex", "generate-core-file "+core, exe).CombinedOutput()
	if err != nil {
		t.Fatalf("no core: %v\n%s", err, out)
	}
	return exe, core
}

// TestFrameValuesMatchGDB crashes small C and C++ programs at -O0 and -O2
// and compares every frame's arguments and locals with gdb's.
func TestFrameValuesMatchGDB(t *testing.T) {
	for _, tool := range []string{"gdb", "gcc", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	cases := []struct {
		name, compiler, src string
		flags               []string
	}{
		{"c-O0", "gcc", "vals.c", []string{"-O0"}},
		{"c-O2", "gcc", "vals.c", []string{"-O2"}},
		{"c-O2-dwarf4", "gcc", "vals.c", []string{"-O2", "-gdwarf-4"}},
		{"cpp-O0", "g++", "vals.cpp", []string{"-O0"}},
		{"cpp-O2", "g++", "vals.cpp", []string{"-O2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe, core := crashProgram(t, tc.compiler, tc.src, dir, tc.flags...)
			want := gdbValues(t, exe, core)
			s, err := analysis.OpenSession(core, analysis.Options{Exe: exe, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			th := s.Crash.Threads[0]
			compared := 0
			for i, gf := range want {
				if i >= len(th.Frames) {
					t.Fatalf("gdb has frame #%d %s; faultline has %d frames", i, gf.header, len(th.Frames))
				}
				f := th.Frames[i]
				if f.Function != gf.header && !strings.HasPrefix(f.Function, gf.header+"(") && !strings.HasSuffix(f.Function, "::"+gf.header) {
					t.Fatalf("frame %d: faultline %q, gdb %q", i, f.Function, gf.header)
				}
				if f.Module != exe && !strings.HasSuffix(f.Module, "/prog") {
					continue // libc frames: no DWARF here
				}
				vals, err := s.FrameValues(th.ID, i)
				if err != nil {
					t.Errorf("frame %d %s: %v", i, f.Function, err)
					continue
				}
				var args, locals [][2]string
				gaps := map[string]bool{}
				for _, v := range vals {
					kv := [2]string{v.Name, v.Text}
					if v.EntryValue {
						gaps[v.Name] = true
					}
					if v.Argument {
						args = append(args, kv)
					} else {
						locals = append(locals, kv)
					}
				}
				compared += compareVars(t, i, f.Function, "args", args, gf.args, gaps)
				compared += compareVars(t, i, f.Function, "locals", locals, gf.locals, gaps)
			}
			if compared < 4 {
				t.Errorf("only %d values compared", compared)
			}
		})
	}
}

// compareVars compares faultline's values of one frame with gdb's, by
// name in order; a value faultline leaves optimized out for want of
// DW_OP_entry_value support is logged, not failed.
func compareVars(t *testing.T, frame int, fn, what string, got, want [][2]string, gaps map[string]bool) int {
	t.Helper()
	byName := map[string][]string{}
	for _, kv := range got {
		byName[kv[0]] = append(byName[kv[0]], kv[1])
	}
	if len(got) != len(want) {
		t.Errorf("frame %d %s %s: faultline %v, gdb %v", frame, fn, what, got, want)
	}
	n := 0
	for _, kv := range want {
		vs := byName[kv[0]]
		if len(vs) == 0 {
			t.Errorf("frame %d %s %s: gdb has %s = %s, faultline has no %s", frame, fn, what, kv[0], kv[1], kv[0])
			continue
		}
		v := vs[0]
		byName[kv[0]] = vs[1:]
		switch {
		case v == kv[1]:
			n++
		case strings.HasPrefix(v, "{...}") && strings.HasPrefix(kv[1], "{"):
			t.Logf("frame %d %s: %s: struct members not printed yet: gdb %s; faultline %s", frame, fn, kv[0], kv[1], v)
		case gaps[kv[0]]:
			t.Logf("frame %d %s: %s: gdb %s from the caller's entry value; faultline %s", frame, fn, kv[0], kv[1], v)
		default:
			t.Errorf("frame %d %s %s: %s = %s, gdb says %s", frame, fn, what, kv[0], v, kv[1])
		}
	}
	return n
}

// TestParameterRefIsNoError (issue 23 item 4): gcc -O2 specialises crunch
// for its constant argument (crunch.constprop.0.isra.0) and describes the
// argument it removed, scale, with DW_OP_GNU_parameter_ref (0xfa) and
// DW_OP_stack_value. gdb prints the value the caller's call site passed
// (scale = 7); faultline prints it as <optimized out>, marked as an entry
// value, and never an error string: before, the DAP Variables, the hover
// and the inlay hint showed "<error: DWARF expression: op 0xfa …>". Every
// other value equals gdb's.
func TestParameterRefIsNoError(t *testing.T) {
	dir := t.TempDir()
	exe, core := crashProgram(t, "gcc", "pref.c", dir, "-O2")
	want := gdbValues(t, exe, core)
	s, err := analysis.OpenSession(core, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	th := s.Crash.Threads[0]
	if len(want) == 0 || want[0].header != "crunch" || th.Frames[0].Function != "crunch" {
		t.Fatalf("frame 0: gdb %v, faultline %q; want crunch", want, th.Frames[0].Function)
	}
	vals, err := s.FrameValues(th.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var args [][2]string
	gaps := map[string]bool{}
	scale := false
	for _, v := range vals {
		if strings.HasPrefix(v.Text, "<error") {
			t.Errorf("%s = %s: an error string", v.Name, v.Text)
		}
		if v.Name == "scale" {
			scale = v.Text == "7" || v.Text == "<optimized out>" && v.EntryValue
		}
		if v.EntryValue {
			gaps[v.Name] = true
		}
		if v.Argument {
			args = append(args, [2]string{v.Name, v.Text})
		}
	}
	if !scale {
		t.Errorf("scale: %v; want 7 (gdb) or <optimized out> from its entry value", vals)
	}
	compareVars(t, 0, "crunch", "args", args, want[0].args, gaps)
}
