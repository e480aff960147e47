package unwind

// maxRegs is the number of DWARF registers a Regs holds: enough for x86-64's
// general registers and rip (0-16) and AArch64's x0-x30, sp and pc (0-32).
const maxRegs = 40

// Regs is a register file numbered by DWARF register number, with a validity
// bit per register. The zero value has no valid registers and no Arch
// (AMD64 is assumed).
type Regs struct {
	Arch  *Arch
	vals  [maxRegs]uint64
	valid uint64
}

// NewRegs returns an empty register file for arch.
func NewRegs(arch *Arch) Regs { return Regs{Arch: arch} }

// NewX86_64Regs returns an x86-64 register file with rip, rsp and rbp and the
// other general registers named in gpr ("rax", "rbx", "r12", ...; names it
// does not know are ignored). gpr may be nil.
func NewX86_64Regs(rip, rsp, rbp uint64, gpr map[string]uint64) Regs {
	r := AMD64.RegsFromNamed(gpr)
	r.Set(AMD64.PC, rip)
	r.Set(AMD64.SP, rsp)
	r.Set(AMD64.FP, rbp)
	return r
}

// RegsFromNamed returns a register file with the registers named in m.
func (a *Arch) RegsFromNamed(m map[string]uint64) Regs {
	r := NewRegs(a)
	for name, v := range m {
		if n, ok := a.RegNumber(name); ok {
			r.Set(n, v)
		}
	}
	return r
}

func (r *Regs) arch() *Arch {
	if r.Arch == nil {
		return AMD64
	}
	return r.Arch
}

// Get returns DWARF register n and whether it is known.
func (r Regs) Get(n int) (uint64, bool) {
	if n < 0 || n >= maxRegs || r.valid&(1<<uint(n)) == 0 {
		return 0, false
	}
	return r.vals[n], true
}

// Set sets DWARF register n (numbers beyond the file are ignored).
func (r *Regs) Set(n int, v uint64) {
	if n < 0 || n >= maxRegs {
		return
	}
	r.vals[n] = v
	r.valid |= 1 << uint(n)
}

// Invalidate marks DWARF register n unknown.
func (r *Regs) Invalidate(n int) {
	if n >= 0 && n < maxRegs {
		r.valid &^= 1 << uint(n)
	}
}

// PC returns the program counter (0 if unknown).
func (r Regs) PC() uint64 { v, _ := r.Get(r.arch().PC); return v }

// SP returns the stack pointer (0 if unknown).
func (r Regs) SP() uint64 { v, _ := r.Get(r.arch().SP); return v }

// Named returns the known registers by name ("rip", "rsp", "rbx", ...).
func (r Regs) Named() map[string]uint64 {
	a := r.arch()
	m := make(map[string]uint64)
	for n := range maxRegs {
		if v, ok := r.Get(n); ok {
			if name := a.RegName(n); name != "" {
				m[name] = v
			}
		}
	}
	return m
}
