package op_test

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
	"github.com/faultline-dev/faultline/analysis/unwind/frame"
	"github.com/faultline-dev/faultline/analysis/unwind/op"
)

// corpusExpr is one DWARF expression found in a corpus binary.
type corpusExpr struct {
	expr    []byte
	ptrSize int
	cfa     bool // a CFI register rule: evaluated with the CFA pushed first
}

// corpusContext answers every register below 128 and every memory read,
// with values that differ by register and address.
type corpusContext struct{}

func (corpusContext) Reg(n uint64) (uint64, bool) { return 0x7ffc_0000_0000 + n*8, n < 128 }
func (corpusContext) ReadMemory(addr uint64, size int) (uint64, error) {
	v := addr ^ 0x5a5a_5a5a_5a5a_5a5a
	if size < 8 {
		v &= 1<<(8*size) - 1
	}
	return v, nil
}

// corpusCFA is the CFA a CFI register rule's expression starts with.
const corpusCFA = 0x7ffc_0000_1000

// corpusExprs returns the distinct DWARF expressions of the corpus binaries
// (testdata/native, testdata/aarch64) that op evaluates as they are: the CFI
// expressions the unwinder runs (glibc's PLT, __restore_rt, ...) and the
// location expressions of variables (exprloc attributes and location lists;
// those with operations only analysis/debuginfo/variables rewrites are left out).
func corpusExprs(t testing.TB) []corpusExpr {
	t.Helper()
	var paths []string
	for _, pattern := range []string{"native/bin/*", "native/bin/.debug/*", "aarch64/bin/*"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", pattern))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	seen := map[string]bool{}
	var out []corpusExpr
	add := func(e corpusExpr) {
		key := string(e.expr) + string(rune(e.ptrSize))
		if e.cfa {
			key += "c"
		}
		if len(e.expr) == 0 || seen[key] {
			return
		}
		seen[key] = true
		if _, _, err := evalCorpus(e); err == nil {
			out = append(out, e)
		}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ptr := 8
		if f.Class == elf.ELFCLASS32 {
			ptr = 4
		}
		for _, e := range cfiExprs(f) {
			add(corpusExpr{expr: e.expr, ptrSize: ptr, cfa: e.cfa})
		}
		for _, e := range locationExprs(t, f) {
			add(corpusExpr{expr: e, ptrSize: ptr})
		}
		f.Close()
	}
	if len(out) < 50 {
		t.Fatalf("found %d expressions in %d corpus binaries, want at least 50", len(out), len(paths))
	}
	sort.Slice(out, func(i, j int) bool {
		if c := bytes.Compare(out[i].expr, out[j].expr); c != 0 {
			return c < 0
		}
		return !out[i].cfa && out[j].cfa
	})
	return out
}

func evalCorpus(e corpusExpr) (uint64, bool, error) {
	if e.cfa {
		return op.Eval(e.expr, binary.LittleEndian, e.ptrSize, corpusContext{}, corpusCFA)
	}
	return op.Eval(e.expr, binary.LittleEndian, e.ptrSize, corpusContext{})
}

// cfiExpr is an expression of a CFI row.
type cfiExpr struct {
	expr []byte
	cfa  bool // a register rule (the CFA is pushed first), not the CFA rule
}

// cfiExprs runs the CFI of every function symbol (at its first and last
// byte; glibc's __restore_rt has size 0) and of every byte of the PLT, and
// collects the expressions of the rows.
func cfiExprs(f *elf.File) []cfiExpr {
	var tabs []*frame.Table
	ptr := 8
	if f.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	if s := f.Section(".eh_frame"); s != nil {
		data, _ := s.Data()
		tabs = append(tabs, frame.NewEHFrame(data, s.Addr, nil, 0, binary.LittleEndian, ptr))
	}
	if s := f.Section(".debug_frame"); s != nil {
		data, _ := s.Data()
		tabs = append(tabs, frame.NewDebugFrame(data, s.Addr, binary.LittleEndian, ptr))
	}
	var pcs []uint64
	syms, _ := f.Symbols()
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		pcs = append(pcs, s.Value)
		if s.Size > 1 {
			pcs = append(pcs, s.Value+s.Size-1)
		}
	}
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		if s := f.Section(name); s != nil {
			for pc := s.Addr; pc < s.Addr+s.Size; pc++ {
				pcs = append(pcs, pc)
			}
		}
	}
	var out []cfiExpr
	for _, tab := range tabs {
		for _, pc := range pcs {
			row, _, err := tab.RowFor(pc)
			if err != nil {
				continue
			}
			if row.CFA.Expr != nil {
				out = append(out, cfiExpr{expr: row.CFA.Expr})
			}
			for _, r := range row.Regs {
				if r.Kind == frame.RuleExpression || r.Kind == frame.RuleValExpression {
					out = append(out, cfiExpr{expr: r.Expr, cfa: true})
				}
			}
		}
	}
	return out
}

// locationExprs collects f's location expressions: every exprloc attribute
// of .debug_info and every entry of .debug_loclists.
func locationExprs(t testing.TB, f *elf.File) [][]byte {
	var out [][]byte
	if d, err := f.DWARF(); err == nil {
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			for _, fld := range e.Field {
				if b, ok := fld.Val.([]byte); ok && fld.Class == dwarf.ClassExprLoc {
					out = append(out, b)
				}
			}
		}
	}
	if s := f.Section(".debug_loclists"); s != nil {
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, loclistExprs(data)...)
	}
	return out
}

// DWARF 5 location list entry kinds (§7.7.3, Table 7.10).
const (
	lleEndOfList       = 0
	lleBaseAddressx    = 1
	lleStartxEndx      = 2
	lleStartxLength    = 3
	lleOffsetPair      = 4
	lleDefaultLocation = 5
	lleBaseAddress     = 6
	lleStartEnd        = 7
	lleStartLength     = 8
)

// loclistExprs walks .debug_loclists (32-bit DWARF 5 units) and returns the
// expression of every entry.
func loclistExprs(data []byte) [][]byte {
	var out [][]byte
	c := cursor.New(data, binary.LittleEndian, 0)
	for c.Len() > 0 {
		unitLen := int(c.U32())
		end := c.Off + unitLen
		c.U16() // version
		asize := int(c.U8())
		c.U8() // segment selector size
		c.Skip(4 * int(c.U32()))
		for c.Err() == nil && c.Off < end {
			kind := c.U8()
			switch kind {
			case lleEndOfList:
				continue
			case lleBaseAddressx:
				c.ULEB128()
				continue
			case lleBaseAddress:
				c.Uint(asize)
				continue
			case lleStartxEndx, lleStartxLength, lleOffsetPair:
				c.ULEB128()
				c.ULEB128()
			case lleStartEnd:
				c.Uint(asize)
				c.Uint(asize)
			case lleStartLength:
				c.Uint(asize)
				c.ULEB128()
			case lleDefaultLocation:
			default:
				return out
			}
			out = append(out, c.Bytes(int(c.ULEB128())))
		}
		c.Seek(end)
	}
	return out
}

// BenchmarkEvalCorpus evaluates every corpus expression once per iteration.
// Besides wall time it reports the process's CPU time per expression
// (cpu-ns/expr), which a machine shared with other jobs disturbs less.
func BenchmarkEvalCorpus(b *testing.B) {
	exprs := corpusExprs(b)
	var before syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		for _, e := range exprs {
			evalCorpus(e)
		}
	}
	b.StopTimer()
	var after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		b.Fatal(err)
	}
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	n := float64(b.N * len(exprs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/expr")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/expr")
}
