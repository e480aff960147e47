package frame

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// x86-64 DWARF register names as readelf prints them (binutils
// dwarf.c dwarf_regnames_x86_64); column 16 is the return address.
var regNames = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ra"}

func regName(n uint64) string {
	if n < uint64(len(regNames)) {
		return regNames[n]
	}
	return fmt.Sprintf("r%d", n)
}

// readelfFDE is one FDE of `readelf -wF`: its offset, range and decoded rows.
type readelfFDE struct {
	section  string
	off      uint64
	lo, hi   uint64
	rows     []readelfRow
	fdeLine  string
	colNames []string
}

type readelfRow struct {
	loc  uint64
	cols map[string]string // "CFA" and register names -> readelf's text
}

// readelfFrames runs `readelf -wF` (the interpreted frame tables) on path.
func readelfFrames(t *testing.T, path string) []*readelfFDE {
	t.Helper()
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf not installed")
	}
	// readelf exits 1 over warnings (e.g. a missing separate debug file);
	// its tables are still complete.
	out, err := exec.Command("readelf", "-wF", path).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("readelf: %v", err)
	}
	var fdes []*readelfFDE
	var cur *readelfFDE
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Contents of the "):
			section = strings.Fields(line)[3]
			cur = nil
		case strings.Contains(line, " FDE cie="):
			f := strings.Fields(line)
			off, _ := strconv.ParseUint(f[0], 16, 64)
			lohi := strings.TrimPrefix(f[len(f)-1], "pc=")
			lo, hi, _ := strings.Cut(lohi, "..")
			cur = &readelfFDE{section: section, off: off, fdeLine: line}
			cur.lo, _ = strconv.ParseUint(lo, 16, 64)
			cur.hi, _ = strconv.ParseUint(hi, 16, 64)
			fdes = append(fdes, cur)
		case strings.Contains(line, " CIE"):
			cur = nil
		case cur != nil && strings.HasPrefix(line, "   LOC"):
			cur.colNames = strings.Fields(line)
		case cur != nil && len(line) > 16 && cur.colNames != nil:
			toks := readelfTokens(line)
			loc, err := strconv.ParseUint(toks[0], 16, 64)
			if err != nil || len(toks[0]) != 16 {
				continue // not a row: "ZERO terminator", blank, ...
			}
			row := readelfRow{loc: loc, cols: map[string]string{}}
			if len(toks) != len(cur.colNames) {
				t.Fatalf("readelf row %q does not match its header %q", line, cur.colNames)
			}
			for k := 1; k < len(toks); k++ {
				row.cols[cur.colNames[k]] = toks[k]
			}
			cur.rows = append(cur.rows, row)
		}
	}
	return fdes
}

// readelfTokens splits a row of readelf -wF into its columns. readelf prints
// every referenced column in every row (binutils dwarf.c frame_display_row);
// a register rule prints as "r1 (rdx)", which becomes "rdx".
func readelfTokens(line string) []string {
	f := strings.Fields(line)
	var out []string
	for i := 0; i < len(f); i++ {
		if i+1 < len(f) && strings.HasPrefix(f[i+1], "(") && strings.HasSuffix(f[i+1], ")") {
			out = append(out, strings.Trim(f[i+1], "()"))
			i++
			continue
		}
		out = append(out, f[i])
	}
	return out
}

// formatRow renders a Row the way readelf -wF does.
func formatRow(r *Row, cols []string) map[string]string {
	m := map[string]string{}
	if r.CFA.Expr != nil {
		m["CFA"] = "exp"
	} else {
		m["CFA"] = fmt.Sprintf("%s%+d", regName(r.CFA.Reg), r.CFA.Offset)
	}
	for reg, rule := range r.Regs {
		var v string
		switch rule.Kind {
		case RuleUndefined:
			v = "u"
		case RuleSameValue:
			v = "s"
		case RuleOffset:
			v = fmt.Sprintf("c%+d", rule.Offset)
		case RuleValOffset:
			v = fmt.Sprintf("v%+d", rule.Offset)
		case RuleRegister:
			v = regName(rule.Reg)
		case RuleExpression:
			v = "exp"
		case RuleValExpression:
			v = "vexp"
		default:
			continue
		}
		m[regName(reg)] = v
	}
	return m
}

// compareWithReadelf checks every FDE and every row of the ELF file's
// .eh_frame and .debug_frame against readelf's interpretation.
func compareWithReadelf(t *testing.T, path string, useHdr bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables := map[string]*Table{}
	if s := f.Section(".eh_frame"); s != nil {
		data, _ := s.Data()
		var hdr []byte
		var hdrAddr uint64
		if h := f.Section(".eh_frame_hdr"); h != nil && useHdr {
			hdr, _ = h.Data()
			hdrAddr = h.Addr
		}
		tables[".eh_frame"] = NewEHFrame(data, s.Addr, hdr, hdrAddr, binary.LittleEndian, 8)
	}
	if s := f.Section(".debug_frame"); s != nil {
		data, _ := s.Data()
		tables[".debug_frame"] = NewDebugFrame(data, s.Addr, binary.LittleEndian, 8)
	}
	fdes := readelfFrames(t, path)
	if len(fdes) == 0 {
		t.Fatalf("readelf listed no FDEs for %s", path)
	}
	nrows, bad := 0, 0
	for _, want := range fdes {
		tab := tables[strings.TrimSuffix(want.section, ":")]
		if tab == nil || want.lo == want.hi {
			continue
		}
		fde, err := tab.FDEFor(want.lo)
		if err != nil {
			t.Errorf("%s: FDEFor(%#x): %v", want.fdeLine, want.lo, err)
			continue
		}
		if fde.Begin != want.lo || fde.End != want.hi {
			// Overlapping FDEs are legal; check this one directly.
			if fde, err = tab.fdeAt(want.off); err != nil || fde.Begin != want.lo || fde.End != want.hi {
				t.Errorf("%s: got FDE %#x..%#x (%v)", want.fdeLine, fde.Begin, fde.End, err)
				continue
			}
		}
		for _, wr := range want.rows {
			nrows++
			row, err := tab.Execute(fde, wr.loc)
			if err != nil {
				t.Errorf("%s at %#x: %v", want.fdeLine, wr.loc, err)
				continue
			}
			got := formatRow(row, want.colNames)
			for col, w := range wr.cols {
				if col == "LOC" {
					continue
				}
				// readelf prints "u" both for DW_CFA_undefined and for a
				// register the FDE only mentions later (no rule yet).
				if w == "u" && got[col] == "" {
					continue
				}
				if got[col] != w && bad < 20 {
					bad++
					t.Errorf("%s at %#x: %s = %q, readelf %q", want.fdeLine, wr.loc, col, got[col], w)
				}
			}
		}
	}
	t.Logf("%s: %d FDEs, %d rows compared with readelf", filepath.Base(path), len(fdes), nrows)
}

// TestLibcAgainstReadelf checks glibc's .eh_frame (PLT expressions, the
// signal trampoline, remember/restore_state) through .eh_frame_hdr and
// through the FDE index.
func TestLibcAgainstReadelf(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skip("no libc.so.6")
	}
	t.Run("hdr", func(t *testing.T) { compareWithReadelf(t, libc, true) })
	t.Run("index", func(t *testing.T) { compareWithReadelf(t, libc, false) })
}

// TestCompiledAgainstReadelf builds a program with .eh_frame and with
// .debug_frame only (DWARF 4 and 5 CIEs) and compares every row.
func TestCompiledAgainstReadelf(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	src, _ := filepath.Abs("../testdata/crash.c")
	for _, v := range []struct {
		name  string
		flags []string
	}{
		{"eh_frame-O2", []string{"-O2"}},
		{"debug_frame-dwarf4", []string{"-O2", "-gdwarf-4", "-fno-asynchronous-unwind-tables"}},
		{"debug_frame-dwarf5", []string{"-O0", "-gdwarf-5", "-fno-asynchronous-unwind-tables"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "crash")
			args := append([]string{"-g", "-pthread", "-o", exe, src}, v.flags...)
			if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
			compareWithReadelf(t, exe, true)
		})
	}
}
