package symbolize

import (
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/debuginfo/elfsym"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestMiniDebugInfoSymbols: the .gnu_debugdata of the MiniDebugInfo test
// build (testdata/debuginfo/gen.sh, made as Fedora makes it) decodes to an
// ELF whose .symtab names the static functions .dynsym lacks.
func TestMiniDebugInfoSymbols(t *testing.T) {
	o, err := object.OpenObject("../../../testdata/debuginfo/bin/mini/layers")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	mini, err := o.MiniDebugInfo()
	if err != nil || mini == nil {
		t.Fatalf("MiniDebugInfo: %v, %v", mini, err)
	}
	tab := elfsym.ReadSymbols(mini, ".symtab")
	for _, name := range []string{"check_config", "start", "load_config", "main"} {
		if _, ok := tab.Names()[name]; !ok {
			t.Errorf("%s not in the MiniDebugInfo symbol table", name)
		}
	}
	s := NewSymbols(o, o)
	a, _ := tab.Names()["check_config"]
	if locs := s.Lookup(a + 1); len(locs) != 1 || locs[0].Function != "check_config" {
		t.Errorf("Lookup inside check_config: %+v", locs)
	}
}

// FuzzMiniDebugInfo: arbitrary .gnu_debugdata contents (an xz stream that
// should hold an ELF) never panic or hang, and decode within the cap.
func FuzzMiniDebugInfo(f *testing.F) {
	o, err := object.OpenObject("../../../testdata/debuginfo/bin/mini/layers")
	if err != nil {
		f.Fatal(err)
	}
	defer o.Close()
	s := o.ELF().Section(".gnu_debugdata")
	if s == nil {
		f.Fatal("no .gnu_debugdata")
	}
	seed := append([]byte(nil), o.RawSection(s)...)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte("\xfd7zXZ\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The xz decoder may allocate its dictionary (capped at 64 MiB) up front.
		fuzzbudget.Check(t, len(data), fuzzbudget.Budget{Alloc: 160 << 20, PerByte: 64, Time: 5 * time.Second}, func() {
			out, err := object.DecompressXZ(data, 1<<20)
			if err == nil && len(out) > 1<<20 {
				t.Fatalf("%d bytes past the cap", len(out))
			}
			if err == nil {
				if obj, err := object.NewObjectFromBytes("fuzz", out); err == nil {
					elfsym.ReadSymbols(obj, ".symtab")
				}
			}
		})
	})
}
