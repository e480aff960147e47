package symbolize

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// requireTools skips the test when a tool it compares against is missing.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// compile builds a program from testdata/src into dir.
func compile(t *testing.T, compiler, dir, out string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, out)
	cmd := exec.Command(compiler, append(append([]string{}, args...), "-o", path)...)
	cmd.Dir = "testdata/src"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", compiler, args, err, b)
	}
	return path
}

// makeCore runs prog (expected to crash) and returns the core it dumped:
// the kernel's (ulimit -c unlimited, core_pattern "core") or, failing
// that, one written by gdb's generate-core-file.
func makeCore(t *testing.T, prog string) string {
	t.Helper()
	dir := filepath.Dir(prog)
	cmd := exec.Command("sh", "-c", "ulimit -c unlimited; exec "+prog)
	cmd.Dir = dir
	_ = cmd.Run()
	if cmd.ProcessState != nil {
		for _, name := range []string{"core", fmt.Sprintf("core.%d", cmd.ProcessState.Pid())} {
			p := filepath.Join(dir, name)
			if object.IsRegular(p) {
				return p
			}
		}
	}
	p := filepath.Join(dir, "core.gdb")
	out, err := exec.Command("gdb", "-batch", "-ex", "run", "-ex", "generate-core-file "+p, prog).CombinedOutput()
	if err != nil || !object.IsRegular(p) {
		t.Fatalf("no core for %s: %v\n%s", prog, err, out)
	}
	return p
}

// gdbFrame is one line of gdb's bt.
type gdbFrame struct {
	index    int
	pc       uint64
	function string
	file     string
	line     int
	tailCall bool
}

var (
	btLine      = regexp.MustCompile(`^#(\d+)\s+0x([0-9a-f]+) in (.+) \([^()]*\)(?: at (\S+):(\d+))?(?: from \S+)?$`)
	stackLevel  = regexp.MustCompile(`^Stack level (\d+), frame at`)
	mappingLine = regexp.MustCompile(`^\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)`)
)

// gdbCoreBacktrace runs gdb's bt on a core and returns its frames and the
// file mappings (path -> start of the mapping at file offset 0).
func gdbCoreBacktrace(t *testing.T, prog, core string) ([]gdbFrame, map[string]uint64) {
	t.Helper()
	out, err := exec.Command("gdb", "-nx", "-batch",
		"-ex", "set print frame-info location-and-address",
		"-ex", "set print frame-arguments none",
		"-ex", "bt",
		"-ex", "frame apply all -q info frame",
		"-ex", "info proc mappings",
		prog, core).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var frames []gdbFrame
	maps := map[string]uint64{}
	level := -1
	for _, l := range strings.Split(string(out), "\n") {
		if m := btLine.FindStringSubmatch(l); m != nil {
			f := gdbFrame{function: m[3], file: m[4]}
			f.index, _ = strconv.Atoi(m[1])
			f.pc, _ = strconv.ParseUint(m[2], 16, 64)
			f.line, _ = strconv.Atoi(m[5])
			if f.index == len(frames) {
				frames = append(frames, f)
			}
			continue
		}
		if m := stackLevel.FindStringSubmatch(l); m != nil {
			level, _ = strconv.Atoi(m[1])
			continue
		}
		if strings.Contains(l, "tail call frame") && level >= 0 && level < len(frames) {
			frames[level].tailCall = true
		}
		if m := mappingLine.FindStringSubmatch(l); m != nil && m[3] == "0" {
			start, _ := strconv.ParseUint(m[1], 16, 64)
			if _, ok := maps[m[4]]; !ok {
				maps[m[4]] = start
			}
		}
	}
	if len(frames) == 0 {
		t.Fatalf("no frames in gdb output:\n%s", out)
	}
	return frames, maps
}

// loadBias is the module's load bias: where its first PT_LOAD (file offset
// 0 page) was mapped minus its link-time page address.
func loadBias(t *testing.T, path string, mapStart uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return mapStart - (p.Vaddr - p.Off)
		}
	}
	t.Fatalf("%s: no PT_LOAD", path)
	return 0
}

// gdbLevel is one inline level of gdb's view of a pc.
type gdbLevel struct {
	function string
	file     string
	line     int
}

// gdbSweepScript prints, for each address, gdb's inline chain the way bt
// would show it: level 0's file and line from find_pc_line, outer levels'
// from the inlined function symbol (DW_AT_call_file/call_line), and the
// minimal symbol when no function block covers the address.
const gdbSweepScript = `
import gdb
out = open(OUT_PATH, "w")
for ln in open(IN_PATH):
    pc = int(ln, 16)
    fields = ["%x" % pc]
    try:
        b = gdb.block_for_pc(pc)
    except RuntimeError:
        b = None
    funcs = []
    while b is not None:
        if b.function is not None:
            funcs.append(b.function)
        b = b.superblock
    sal = gdb.find_pc_line(pc)
    f0 = sal.symtab.filename if sal.symtab is not None and sal.line else ""
    l0 = sal.line if sal.symtab is not None else 0
    if not funcs:
        s = gdb.execute("info symbol 0x%x" % pc, to_string=True).strip()
        name = "" if s.startswith("No symbol") else s.split(" in section ")[0].rsplit(" + ", 1)[0]
        fields.append("%s|%s|%d" % (name, f0, l0))
    for i, f in enumerate(funcs):
        if i == 0:
            fields.append("%s|%s|%d" % (f.print_name, f0, l0))
        else:
            p = funcs[i-1]
            fields.append("%s|%s|%d" % (f.print_name, p.symtab.filename if p.symtab else "", p.line))
    out.write("\t".join(fields) + "\n")
out.close()
`

// gdbSweep asks gdb for the inline chain at each address of an ELF file
// (link-time addresses, no process).
func gdbSweep(t *testing.T, path string, pcs []uint64) map[uint64][]gdbLevel {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "pcs")
	outPath := filepath.Join(dir, "out")
	var sb strings.Builder
	for _, pc := range pcs {
		fmt.Fprintf(&sb, "%x\n", pc)
	}
	if err := os.WriteFile(in, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "sweep.py")
	src := strings.NewReplacer("OUT_PATH", strconv.Quote(outPath), "IN_PATH", strconv.Quote(in)).Replace(gdbSweepScript)
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gdb", "-nx", "-batch", "-ex", "source "+script, path).CombinedOutput(); err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	f, err := os.Open(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := map[uint64][]gdbLevel{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		pc, _ := strconv.ParseUint(fields[0], 16, 64)
		var levels []gdbLevel
		for _, fl := range fields[1:] {
			p := strings.Split(fl, "|")
			if len(p) != 3 {
				continue
			}
			line, _ := strconv.Atoi(p[2])
			levels = append(levels, gdbLevel{function: p[0], file: p[1], line: line})
		}
		res[pc] = levels
	}
	return res
}

// removeParams is what gdb's cp_remove_params does to a demangled C++
// name: drop the trailing parameter list (and qualifiers after it).
func removeParams(name string) string {
	s := strings.TrimSpace(name)
	for _, q := range []string{" const", " volatile", " &&", " &"} {
		s = strings.TrimSuffix(s, q)
	}
	if !strings.HasSuffix(s, ")") {
		return name
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return name
}

// openSymbols opens a binary and the debug file the Locator finds for it.
func openSymbols(t *testing.T, path string, l *debugfile.Locator) (*Symbols, func()) {
	t.Helper()
	bin, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil {
		l = &debugfile.Locator{}
	}
	dbgPath, problems := l.FindDebug(path, bin)
	var dbg *object.Object
	if dbgPath != "" && dbgPath != path {
		if dbg, err = object.OpenObject(dbgPath); err != nil {
			t.Fatal(err)
		}
	} else if dbgPath == "" {
		t.Logf("%s: no debug file: %v", path, problems)
	}
	return NewSymbols(bin, dbg), func() {
		bin.Close()
		if dbg != nil {
			dbg.Close()
		}
	}
}

func formatLocs(locs []Location) string {
	var parts []string
	for _, l := range locs {
		parts = append(parts, fmt.Sprintf("%s@%s:%d", l.Function, l.File, l.Line))
	}
	return strings.Join(parts, " <- ")
}

func formatLevels(levels []gdbLevel) string {
	var parts []string
	for _, l := range levels {
		parts = append(parts, fmt.Sprintf("%s@%s:%d", l.function, l.file, l.line))
	}
	return strings.Join(parts, " <- ")
}

func fmtSscanHex(s string, v *uint64) (int, error) {
	x, err := strconv.ParseUint(s, 16, 64)
	*v = x
	return 1, err
}
