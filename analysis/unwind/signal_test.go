package unwind

import (
	"testing"

	"github.com/faultline-dev/faultline/analysis/unwind/frame"
)

// TestSignalTrampolineCFI checks the DWARF expressions of glibc's
// __restore_rt FDE (CIE augmentation "zRS", a DW_CFA_def_cfa_expression and
// one DW_CFA_expression per register) against the ucontext the unwinder
// reads directly, on a real core: both must give the interrupted registers
// that gdb shows (TestAgainstGDB checks the ucontext path against gdb).
func TestSignalTrampolineCFI(t *testing.T) {
	needTools(t)
	exe := buildCrash(t, t.TempDir(), "-O2")
	c := openTestCore(t, makeCore(t, exe, "handler"))
	u := NewUnwinder(c, c, Options{})
	frames, stop := u.Unwind(c.threads[0].regs)
	if stop != "" {
		t.Fatalf("stop %q", stop)
	}
	for i, f := range frames {
		if !f.SignalTrampoline {
			continue
		}
		mod := u.module(f.PC)
		if mod == nil {
			t.Fatalf("trampoline %#x in no module", f.PC)
		}
		mem := &memReader{mem: c, arch: AMD64}
		// The kernel's return address is __restore_rt itself; glibc starts
		// the FDE one byte early so that pc-1 finds it.
		row, fde, err := u.rowFor(mod, mem, f.PC-1)
		if err != nil {
			t.Fatalf("no CFI for the trampoline: %v", err)
		}
		if !fde.CIE.SignalFrame || row.CFA.Expr == nil {
			t.Fatalf("trampoline FDE: signal %v, CFA expression %v", fde.CIE.SignalFrame, row.CFA.Expr != nil)
		}
		s := &stepper{u: u, arch: AMD64, mem: mem}
		tramp := f
		viaCFI, end, err := s.cfiStep(&tramp, row)
		if err != nil || end {
			t.Fatalf("CFI step: end %v, %v", end, err)
		}
		want := frames[i+1].Regs
		for n := range 17 {
			w, _ := want.Get(n)
			g, ok := viaCFI.Regs.Get(n)
			if !ok || g != w {
				t.Errorf("%s: CFI %#x (known %v), ucontext %#x", AMD64.RegName(n), g, ok, w)
			}
		}
		if rule := row.Rule(uint64(AMD64.RA)); rule.Kind != frame.RuleExpression {
			t.Errorf("return address rule %v, want an expression", rule.Kind)
		}
		return
	}
	t.Fatal("no signal trampoline frame")
}
