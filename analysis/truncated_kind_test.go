package analysis_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

// ntSigInfo is the note type of the signal's siginfo ("SIGI").
const ntSigInfo = 0x53494749

// coreCuts are the offsets a corpus core is cut at: inside the first
// thread's NT_PRSTATUS, inside NT_SIGINFO, and right after the notes
// (before any memory).
type coreCuts struct{ prstatus, siginfo, memory int }

// cutsOf finds the cut offsets in a whole core's notes.
func cutsOf(t *testing.T, core []byte) coreCuts {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(core))
	if err != nil {
		t.Fatal(err)
	}
	var cuts coreCuts
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		cuts.prstatus = int(p.Off) + 100
		cuts.memory = int(p.Off + p.Filesz)
		for off := int(p.Off); off+12 <= cuts.memory; {
			namesz, descsz := binary.LittleEndian.Uint32(core[off:]), binary.LittleEndian.Uint32(core[off+4:])
			if binary.LittleEndian.Uint32(core[off+8:]) == ntSigInfo {
				cuts.siginfo = off + 12 + int(namesz+3)&^3 + 8
			}
			off += 12 + int(namesz+3)&^3 + int(descsz+3)&^3
		}
	}
	if cuts.siginfo == 0 || cuts.memory == 0 {
		t.Fatalf("no NT_SIGINFO or PT_NOTE in the core: %+v", cuts)
	}
	return cuts
}

// TestTruncatedCoreClaimsNoKind: a core cut short claims no crash kind
// from data that is not in the file. Copies of corpus cores are cut inside
// the crashing thread's registers (NT_PRSTATUS), inside the signal's
// details (NT_SIGINFO) and right after the notes (every stack cut off):
// the first two give kind unknown with the evidence naming the note, not
// "hang" (no signal read) or a fault kind guessed without si_code/si_addr;
// the third keeps the kind the notes and the executable prove, and says
// what its stack would have told.
func TestTruncatedCoreClaimsNoKind(t *testing.T) {
	for _, tc := range []struct {
		name             string
		whole, stackless string // kinds of the whole core and of the stackless cut
		stacklessSays    string // the summary of the stackless cut says
	}{
		{"recursion", model.KindStackOverflow, model.KindStackOverflow, "whether unbounded recursion or large locals"},
		{"null_inline", model.KindNullDeref, model.KindNullDeref, "NULL pointer"},
		{"assert_abort", model.KindAssertion, model.KindAbort, "why it aborted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := readCore(t, tc.name)
			cuts := cutsOf(t, whole)
			opt := analysis.Options{Exe: filepath.Join(corpus, "bin", tc.name), Offline: true}
			open := func(n int) *model.Crash {
				path := filepath.Join(t.TempDir(), "core")
				if err := os.WriteFile(path, whole[:n], 0o644); err != nil {
					t.Fatal(err)
				}
				c, err := analysis.Open(path, opt)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			check := func(what string, c *model.Crash, kind string, says ...string) {
				t.Helper()
				cls := c.Classification
				text := cls.Summary + "\n" + strings.Join(cls.Evidence, "\n")
				if cls.Kind != kind {
					t.Errorf("%s: kind %q, want %q\n%s", what, cls.Kind, kind, text)
				}
				for _, s := range says {
					if !strings.Contains(text, s) {
						t.Errorf("%s: summary and evidence lack %q:\n%s", what, s, text)
					}
				}
			}
			check("whole core", open(len(whole)), tc.whole)
			c := open(cuts.prstatus)
			check("cut in NT_PRSTATUS", c, model.KindUnknown, "NT_PRSTATUS")
			if !hasProblem(c, "the notes (threads, registers, signal, mappings) are cut short") {
				t.Errorf("cut in NT_PRSTATUS: no problem says the notes are cut: %+v", c.Problems)
			}
			var md strings.Builder
			if err := report.Markdown(&md, c, ""); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(md.String(), "live process") || !strings.Contains(md.String(), "**Crash signal:** unknown: the core is truncated") ||
				!strings.Contains(md.String(), "1. Get a whole core") {
				t.Errorf("cut in NT_PRSTATUS: the report calls it a live dump or names no truncation:\n%s", md.String())
			}
			c = open(cuts.siginfo)
			check("cut in NT_SIGINFO", c, model.KindUnknown, "NT_SIGINFO", c.Signal.Name)
			if strings.Contains(c.Classification.Summary, "JIT") {
				t.Errorf("cut in NT_SIGINFO: the executable that could not be placed is called JIT code: %s", c.Classification.Summary)
			}
			c = open(cuts.memory)
			check("stacks cut off", c, tc.stackless, tc.stacklessSays, "stack is cut off the core")
			if in := c.Dump.Incomplete; in == nil || !in.CrashingStackAbsent || in.NotesCut {
				t.Errorf("stacks cut off: incomplete %+v, want the crashing stack absent and the notes whole", in)
			}
		})
	}
}

func hasProblem(c *model.Crash, s string) bool {
	for _, p := range c.Problems {
		if strings.Contains(p.Message, s) {
			return true
		}
	}
	return false
}
