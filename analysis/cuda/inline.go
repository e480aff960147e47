package cuda

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// maxInlineDepth bounds a reconstructed chain: contexts always point to
// earlier rows, so a longer chain means a damaged table.
const maxInlineDepth = 512

// Frame is one level of an inline chain.
type Frame struct {
	// Function is the demangled name without parameters, as gdb's bt shows it.
	Function string `json:"function"`
	// Linkage is the name as the cubin records it (mangled).
	Linkage string `json:"linkageName,omitempty"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
}

// Location is what one address of a cubin resolves to.
type Location struct {
	// Address is the device address: the section's address plus Offset
	// (equal to Offset in non-relocated cubins).
	Address uint64
	// Section is the code section, ".text.KERNEL".
	Section string
	// Offset is the offset within Section, as nvdisasm prints it.
	Offset uint64
	// Function is the enclosing function symbol, demangled (a kernel, or a
	// noinline device function placed inside the kernel's section).
	Function string
	// Symbol is that symbol's raw name and SymbolOffset the offset from it.
	Symbol       string
	SymbolOffset uint64
	// Frames is the inline chain, innermost first; the last frame is the
	// enclosing function's own line. Empty without line information.
	Frames []Frame
}

// Resolve resolves an address in the forms `faultline gpu-lines` accepts:
// "KERNEL+0xOFF" (an offset within the kernel's .text.KERNEL section, as
// nvdisasm prints it; KERNEL may also be a section or function name) or a
// device address "0x7f..." for relocated images. A bare offset is taken
// as an offset into the image's only code section.
func (c *Cubin) Resolve(addr string) (Location, error) {
	addr = strings.TrimSpace(addr)
	if i := strings.LastIndexByte(addr, '+'); i > 0 {
		name, offText := addr[:i], addr[i+1:]
		off, err := parseNumber(offText)
		if err != nil {
			return Location{}, fmt.Errorf("%q: bad offset: %v", addr, err)
		}
		sec := c.textSection(name)
		if sec < 0 {
			return Location{}, fmt.Errorf("%q: no code section or function %q in this cubin", addr, name)
		}
		if fn := c.functionNamed(name); fn != nil && fn.secIndex == sec {
			off += fn.Offset // a device function placed inside a section
		}
		return c.LookupOffset(sec, off)
	}
	a, err := parseNumber(addr)
	if err != nil {
		return Location{}, fmt.Errorf("%q: want KERNEL+0xOFFSET or an address: %v", addr, err)
	}
	return c.LookupAddress(a)
}

func parseNumber(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 0, 64)
}

func (c *Cubin) functionNamed(name string) *Function {
	for _, i := range c.bySec[c.byName[name]] {
		if c.funcs[i].Name == name {
			return &c.funcs[i]
		}
	}
	return nil
}

// LookupAddress resolves a device address. In a non-relocated cubin every
// section starts at 0, so an address is ambiguous unless one code section
// holds it.
func (c *Cubin) LookupAddress(a uint64) (Location, error) {
	if c.Relocated() {
		sec := c.sectionAt(a)
		if sec < 0 {
			return Location{}, fmt.Errorf("address %#x is in no code section of this image", a)
		}
		return c.LookupOffset(sec, a-c.elf.sections[sec].Addr)
	}
	var secs []int
	for i := range c.elf.sections {
		s := &c.elf.sections[i]
		if s.Flags&shfExecInstr != 0 && a < s.Size {
			secs = append(secs, i)
		}
	}
	switch len(secs) {
	case 0:
		return Location{}, fmt.Errorf("offset %#x is past every code section", a)
	case 1:
		return c.LookupOffset(secs[0], a)
	}
	var names []string
	for _, i := range secs {
		names = append(names, strings.TrimPrefix(c.elf.sections[i].Name, ".text."))
	}
	return Location{}, fmt.Errorf("this cubin is not relocated: offset %#x is in %d kernels; write KERNEL+%#x (%s)",
		a, len(secs), a, strings.Join(names, ", "))
}

// LookupOffset resolves offset off of code section sec (an ELF section
// index).
func (c *Cubin) LookupOffset(sec int, off uint64) (Location, error) {
	if sec <= 0 || sec >= len(c.elf.sections) {
		return Location{}, fmt.Errorf("no section %d", sec)
	}
	s := &c.elf.sections[sec]
	if off >= s.Size {
		return Location{}, fmt.Errorf("offset %#x is past the end of %s (%#x bytes)", off, s.Name, s.Size)
	}
	loc := Location{Address: s.Addr + off, Section: s.Name, Offset: off}
	if fn := c.enclosingFunction(sec, off); fn != nil {
		loc.Symbol = fn.Name
		loc.SymbolOffset = off - fn.Offset
		loc.Function = c.demangle(fn.Name)
	}
	loc.Frames = c.chain(sec, off, loc.Function, loc.Symbol)
	return loc, nil
}

// rowAt finds the row in effect at offset off of section sec: the last row
// at or before off in the sequence covering it (several rows at one address
// are the levels of one inline chain; the last is the innermost).
func (c *Cubin) rowAt(sec int, off uint64) (*placedSeq, int) {
	seqs := c.lines[sec]
	// The last sequence starting at or before off that still covers it.
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i].start > off })
	for i--; i >= 0; i-- {
		ps := seqs[i]
		if off >= ps.end && ps.end > ps.start {
			continue
		}
		rel := off - ps.delta
		j := sort.Search(len(ps.rows), func(j int) bool { return ps.rows[j].addr > rel })
		if j > 0 {
			return ps, j - 1
		}
	}
	return nil, -1
}

// chain reconstructs the inline chain at offset off of section sec,
// innermost first, following each row's NVIDIA context to the row of its
// call site. outer names the enclosing function (its demangled and raw
// names), which the outermost row does not record.
func (c *Cubin) chain(sec int, off uint64, outer, outerRaw string) []Frame {
	ps, r := c.rowAt(sec, off)
	if ps == nil {
		return nil
	}
	var frames []Frame
	for depth := 0; depth < maxInlineDepth; depth++ {
		row := &ps.rows[r]
		f := Frame{File: ps.table.fileName(row.file), Line: int(row.line), Column: int(row.column)}
		if row.context != 0 && row.nameSet {
			f.Linkage = c.debugString(ps.table.strBase + row.name)
			f.Function = c.demangle(f.Linkage)
		} else {
			f.Function, f.Linkage = outer, outerRaw
		}
		frames = append(frames, f)
		// A context names an earlier row of the sequence; anything else
		// ends the chain rather than loop.
		if row.context == 0 || int(row.context) > r {
			break
		}
		r = int(row.context) - 1
	}
	return frames
}

// DemangleNoParams demangles a cubin function name as gdb's bt shows
// function names: without parameters. It understands the "$kernel$name"
// form ptxas gives noinline functions placed in a kernel's section.
func DemangleNoParams(name string) string {
	if strings.HasPrefix(name, "$") {
		if i := strings.LastIndexByte(name, '$'); i > 0 && i+1 < len(name) {
			name = name[i+1:]
		}
	}
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	s, err := demangle.ToString(name, demangle.NoParams, demangle.MaxLength(20))
	if err != nil {
		return name
	}
	return s
}
