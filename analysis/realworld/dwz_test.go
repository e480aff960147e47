package realworld_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// dwzShape is one way dwz leaves a program's DWARF split across files.
type dwzShape struct {
	name string
	// dwz's options: -5 for DWARF 5's .debug_sup and DW_FORM_*_sup
	// instead of the GNU .gnu_debugaltlink and DW_FORM_GNU_*_alt.
	dwzFlags string
	// debian lays the files out as Debian's -dbgsym packages do: the
	// multifile named /usr/lib/debug/.dwz/x86_64-linux-gnu/longtail.debug,
	// the binary stripped, its debug file at .build-id/xx/rest.debug; both
	// under ../debug (and only the latter under ../debug-nodwz).
	debian bool
}

// debianDWZ is the name Debian's layout gives the multifile.
const debianDWZ = "/usr/lib/debug/.dwz/x86_64-linux-gnu/longtail.debug"

// buildDWZ builds dwzmain.c twice (the program and a peer, so that dwz has
// DIEs to share: dwzcommon.h's inline functions) and runs dwz -m over both,
// once per content. It returns the program.
func buildDWZ(t *testing.T, s dwzShape) string {
	t.Helper()
	for _, tool := range []string{"gcc", "dwz", "objcopy", "readelf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (.ci/install.d/longtail.sh installs it): %v", tool, err)
		}
	}
	name := "dwzmain-" + s.name
	multi := `"$(cd .. && pwd)/` + name + `.multi"`
	if s.debian {
		multi = debianDWZ
	}
	script := `gcc -O2 -g -DPEER=0 -o "$OUT" dwzmain.c && gcc -O2 -g -DPEER=1 -o peer dwzmain.c && ` +
		`dwz ` + s.dwzFlags + ` -m ../` + name + `.multi -M ` + multi + ` "$OUT" peer`
	if s.debian {
		script += ` && id=$(readelf -n "$OUT" | sed -n 's/.*Build ID: //p')` +
			` && d=.build-id/$(echo $id | cut -c1-2) && f=$d/$(echo $id | cut -c3-).debug` +
			` && mkdir -p ../debug/$d ../debug-nodwz/$d ../debug/.dwz/x86_64-linux-gnu` +
			` && objcopy --only-keep-debug "$OUT" ../debug/$f && cp ../debug/$f ../debug-nodwz/$f` +
			` && cp ../` + name + `.multi ../debug/.dwz/x86_64-linux-gnu/longtail.debug && objcopy --strip-debug "$OUT"`
	}
	var extra bytes.Buffer
	for _, tool := range []string{"gcc", "dwz"} {
		out, _ := exec.Command(tool, "--version").Output()
		extra.Write(out)
	}
	return crashlab.BuildCached(t, crashlab.Recipe{Name: name, Command: []string{"sh", "-c", script},
		Sources: []string{"dwzmain.c", "dwzcommon.h"}, Dir: programs, Extra: extra.String()})
}

// dwzChain is the crashing thread as gdb prints it (the header's path
// relative to the build directory): the NULL read in rec_weight, inlined
// twice into report; the inlined functions' DIEs are in the multifile.
var dwzChain = []string{
	"rec_weight at dwzcommon.h:7",
	"total_weight at dwzcommon.h:14",
	"report at dwzmain.c:8",
	"main at dwzmain.c:16",
}

// dwzLines are the crashing thread's frames, the build directory taken
// off the header's absolute path.
func dwzLines(bin string, c *model.Crash) []string {
	got := crashlab.ModelLines(*c.CrashingThread())
	for i := range got {
		got[i] = strings.ReplaceAll(got[i], filepath.Join(filepath.Dir(bin), "src")+"/", "")
	}
	return got
}

// gdbWithDebugDir is gdb's backtrace with debug-file-directory set before
// the files are read.
func gdbWithDebugDir(t *testing.T, bin, core, dir string) *logs.GDBLog {
	t.Helper()
	out, err := exec.Command("gdb", "-batch", "-nx", "-iex", "set debug-file-directory "+dir,
		"-ex", "set pagination off", "-ex", "set width 0", "-ex", "thread apply all bt", bin, core).Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	log, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestDWZMultifile (issue 23 item 3): a program whose inlined functions'
// DIEs and names dwz moved into a multifile. faultline reads the names
// there (DW_FORM_GNU_strp_alt and DW_FORM_GNU_ref_alt through
// .gnu_debugaltlink; DW_FORM_strp_sup and DW_FORM_ref_sup4 through
// .debug_sup), found by the path the link names, or, in Debian's -dbgsym
// layout, under the --debug-dir that holds /usr/lib/debug's tree. Before,
// the inlined frames were `?? dwzcommon.h:7` with no word of why. When the
// multifile is missing, the frames are still ?? but a problem names the
// file and where it was looked for.
//
// gdb 13 is wrong on dwz -5's output: "Dwarf Error: Cannot handle
// DW_FORM_strp_sup" and no frames. That shape is held to the frames gdb
// prints for the GNU shape of the same program.
func TestDWZMultifile(t *testing.T) {
	for _, s := range []dwzShape{
		{name: "gnu"},
		{name: "dwarf5", dwzFlags: "-5"},
		{name: "debian", debian: true},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			bin := buildDWZ(t, s)
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
			opt := analysis.Options{Exe: bin, Offline: true}
			debugDir := filepath.Join(filepath.Dir(bin), "debug")
			if s.debian {
				opt.DebugDirs = []string{debugDir}
			}
			c, err := analysis.Open(core, opt)
			if err != nil {
				t.Fatal(err)
			}
			if d := crashlab.Diff(dwzChain, dwzLines(bin, c)); d != "" {
				t.Errorf("frames:\n%s", d)
			}
			for _, p := range c.Problems {
				if strings.Contains(p.Message, "dwz") {
					t.Errorf("problem: %s", p.Message)
				}
			}
			switch s.name {
			case "gnu":
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
			case "debian":
				if d := crashlab.CompareWithGDB(gdbWithDebugDir(t, bin, core, debugDir), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
				missingMultifile(t, bin, core)
			}
		})
	}
}

// missingMultifile opens the Debian-layout core with a debug directory
// that lacks the multifile: the inlined frames have no names, and a
// problem says which file is missing and where it was looked for.
func missingMultifile(t *testing.T, bin, core string) {
	t.Helper()
	c, err := analysis.Open(core, analysis.Options{Exe: bin, Offline: true,
		DebugDirs: []string{filepath.Join(filepath.Dir(bin), "debug-nodwz")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := dwzLines(bin, c); len(got) < 3 || got[2] != dwzChain[2] || !strings.HasPrefix(got[0], "?? at dwzcommon.h:7") {
		t.Errorf("without the multifile: frames %q, want ?? at dwzcommon.h:7 and report's frame kept", got)
	}
	said := false
	for _, p := range c.Problems {
		said = said || strings.Contains(p.Message, "dwz file "+debianDWZ) && strings.Contains(p.Message, "was not found")
	}
	if !said {
		t.Errorf("no problem names the missing multifile %s: %v", debianDWZ, c.Problems)
	}
}
