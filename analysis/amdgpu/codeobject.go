package amdgpu

import (
	"debug/elf"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/regular"
	"github.com/ianlancetaylor/demangle"
)

// maxCodeObjectFile caps the size of a file Open reads whole (ROCm's
// largest libraries with device code are a few GiB; their .hip_fatbin is
// what matters, and the host code is mapped by the ELF reader anyway).
const maxCodeObjectFile = 4 << 30

// Frame is one level of an inline chain.
type Frame struct {
	// Function is the demangled name without parameters.
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column,omitempty"`
}

// Function is a function symbol of a code object.
type Function struct {
	Name    string // raw (mangled) name
	Addr    uint64
	Size    uint64
	Kernel  bool // has a kernel descriptor (NAME.kd)
	Section string
}

// Location is what one address of a code object resolves to.
type Location struct {
	Address uint64
	// Function is the enclosing function symbol, demangled; Symbol its raw
	// name and SymbolOffset the offset from its start.
	Function     string
	Symbol       string
	SymbolOffset uint64
	Section      string // the function's section, ".text"
	Kernel       bool
	// Frames is the inline chain, innermost first; the last frame is the
	// enclosing function's own line. Empty without debug information.
	Frames []Frame
}

// CodeObject is one AMD GPU code object with its symbols and DWARF.
type CodeObject struct {
	Target string
	Where  string
	obj    *object.Object
	syms   *symbolize.Symbols
	funcs  []Function // sorted by address
	data   []byte
}

// Open reads a code object image.
func Open(img Image) (*CodeObject, error) {
	if !isCodeObject(img.Data) {
		return nil, fmt.Errorf("%s: not an AMD GPU code object", img.Where)
	}
	obj, err := object.NewObjectFromBytes(img.Where, img.Data)
	if err != nil {
		return nil, err
	}
	c := &CodeObject{Target: img.Target, Where: img.Where, obj: obj, syms: symbolize.NewSymbols(obj, nil), data: img.Data}
	c.funcs = readFunctions(obj.ELF())
	return c, nil
}

// OpenFile reads every code object in the file at path (see Extract).
func OpenFile(path string) ([]*CodeObject, []string, error) {
	data, err := regular.ReadFile(path, maxCodeObjectFile)
	if err != nil {
		return nil, nil, err
	}
	images, problems, err := Extract(data)
	if err != nil {
		return nil, problems, fmt.Errorf("%s: %w", path, err)
	}
	var out []*CodeObject
	for _, img := range images {
		c, err := Open(img)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, problems, fmt.Errorf("%s: no readable code object", path)
	}
	return out, problems, nil
}

func readFunctions(f *elf.File) []Function {
	syms, _ := f.Symbols()
	kd := map[string]bool{}
	for _, s := range syms {
		if strings.HasSuffix(s.Name, ".kd") && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
			kd[strings.TrimSuffix(s.Name, ".kd")] = true
		}
	}
	var out []Function
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Name == "" {
			continue
		}
		sec := ""
		if int(s.Section) < len(f.Sections) && s.Section > 0 {
			sec = f.Sections[s.Section].Name
		}
		out = append(out, Function{Name: s.Name, Addr: s.Value, Size: s.Size, Kernel: kd[s.Name], Section: sec})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// Bytes is the code object's ELF image (extracted from its container).
func (c *CodeObject) Bytes() []byte { return c.data }

// Functions lists the code object's function symbols by address.
func (c *CodeObject) Functions() []Function { return c.funcs }

// Processor is the code object's processor, "gfx90a".
func (c *CodeObject) Processor() string { return Processor(c.Target) }

// Resolve resolves an address in the forms `faultline gpu-lines` accepts:
// "FUNCTION+0xOFF" (an offset from a function symbol, mangled or
// demangled, as rocgdb and the ROCm debug agent print them) or a load
// address "0x1a00" of the code object.
func (c *CodeObject) Resolve(addr string) (Location, error) {
	addr = strings.TrimSpace(addr)
	if i := strings.LastIndexByte(addr, '+'); i > 0 {
		name, offText := addr[:i], addr[i+1:]
		off, err := parseNumber(offText)
		if err != nil {
			return Location{}, fmt.Errorf("%q: bad offset: %v", addr, err)
		}
		fn := c.functionNamed(name)
		if fn == nil {
			return Location{}, fmt.Errorf("%q: no function %q in this %s code object", addr, name, c.Processor())
		}
		return c.Lookup(fn.Addr + off)
	}
	a, err := parseNumber(addr)
	if err != nil {
		return Location{}, fmt.Errorf("%q: want FUNCTION+0xOFFSET or an address: %v", addr, err)
	}
	return c.Lookup(a)
}

func (c *CodeObject) functionNamed(name string) *Function {
	for i := range c.funcs {
		if c.funcs[i].Name == name {
			return &c.funcs[i]
		}
	}
	for i := range c.funcs {
		if demangleName(c.funcs[i].Name) == name {
			return &c.funcs[i]
		}
	}
	return nil
}

// functionAt is the function symbol whose [Addr, Addr+Size) holds addr.
func (c *CodeObject) functionAt(addr uint64) *Function {
	i := sort.Search(len(c.funcs), func(i int) bool { return c.funcs[i].Addr > addr }) - 1
	for ; i >= 0; i-- {
		f := &c.funcs[i]
		if addr >= f.Addr && addr < f.Addr+max(f.Size, 1) {
			return f
		}
		if f.Size > 0 {
			break
		}
	}
	return nil
}

// Lookup resolves a load address of the code object.
func (c *CodeObject) Lookup(addr uint64) (Location, error) {
	fn := c.functionAt(addr)
	if fn == nil {
		return Location{}, fmt.Errorf("%#x: outside every function of this %s code object", addr, c.Processor())
	}
	loc := Location{Address: addr, Function: demangleName(fn.Name), Symbol: fn.Name,
		SymbolOffset: addr - fn.Addr, Section: fn.Section, Kernel: fn.Kernel, Frames: []Frame{}}
	for _, l := range c.syms.Lookup(addr) {
		loc.Frames = append(loc.Frames, Frame{Function: l.Function, File: cleanPath(l.File), Line: l.Line, Column: l.Column})
	}
	// The innermost level's line as LLVM reads it (line 0 stays 0): AMD's
	// compiler and its debugger of record are LLVM's.
	if file, line, col, ok := c.syms.LLVMLineAt(addr); ok && len(loc.Frames) > 0 {
		f := &loc.Frames[0]
		f.File, f.Line, f.Column = cleanPath(file), line, col
	}
	return loc, nil
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

func demangleName(name string) string {
	if s, err := demangle.ToString(name, demangle.NoParams); err == nil {
		return s
	}
	return name
}

func parseNumber(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}
