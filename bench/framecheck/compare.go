package main

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
)

// Result is the outcome of comparing faultline's threads with gdb's.
type Result struct {
	FaultlineThreads int
	GDBThreads       int
	Matched          int // threads present in both, by LWP
	ThreadsAgree     int // matched threads whose every frame agrees
	Frames           int // frames compared (gdb's count, over matched threads)
	FramesAgree      int
	OnlyFaultline    []int // LWPs
	OnlyGDB          []int // LWPs
	// CrashLWP is the crashing thread: faultline's crashingThread, or gdb's
	// current thread (thread 1 of a core) when faultline names none.
	CrashLWP    int
	CrashGDBLWP int
	CrashFrames int
	CrashAgree  int
	CrashFound  bool // the crashing thread is in both outputs
	Diffs       []Diff
}

// Diff is one frame on which the two tools disagree.
type Diff struct {
	LWP       int
	Index     int
	Faultline string // "function at file:line", or "(missing)"
	GDB       string
}

// CrashOK reports whether the crashing thread agrees frame for frame.
func (r *Result) CrashOK() bool {
	return r.CrashFound && r.CrashLWP == r.CrashGDBLWP && r.CrashAgree == r.CrashFrames
}

// Compare matches c's threads with gl's by LWP and compares their frames.
func Compare(c *analysis.Crash, gl *logs.GDBLog) *Result {
	r := &Result{FaultlineThreads: len(c.Threads), GDBThreads: len(gl.Threads)}
	byLWP := make(map[int]*logs.GDBThread, len(gl.Threads))
	for i := range gl.Threads {
		byLWP[gl.Threads[i].LWP] = &gl.Threads[i]
	}
	r.CrashGDBLWP = gdbCrashLWP(gl)
	r.CrashLWP = c.CrashingThreadID
	if r.CrashLWP == 0 {
		for _, t := range c.Threads {
			if t.Crashed {
				r.CrashLWP = t.ID
			}
		}
	}
	seen := make(map[int]bool, len(c.Threads))
	for _, ft := range c.Threads {
		ft.Frames = nativeFrames(ft.Frames)
		seen[ft.ID] = true
		gt := byLWP[ft.ID]
		if gt == nil {
			r.OnlyFaultline = append(r.OnlyFaultline, ft.ID)
			continue
		}
		r.Matched++
		agree := compareThread(r, ft, gt)
		if agree == len(gt.Frames) && len(ft.Frames) == len(gt.Frames) {
			r.ThreadsAgree++
		}
		if ft.ID == r.CrashLWP {
			r.CrashFound = true
			r.CrashFrames = max(len(gt.Frames), len(ft.Frames))
			r.CrashAgree = agree
		}
	}
	for _, gt := range gl.Threads {
		if !seen[gt.LWP] {
			r.OnlyGDB = append(r.OnlyGDB, gt.LWP)
		}
	}
	sort.Ints(r.OnlyFaultline)
	sort.Ints(r.OnlyGDB)
	return r
}

// nativeFrames drops the Python-level frames faultline interleaves with an
// interpreter's native ones: gdb without CPython's python-gdb.py prints
// only the native frames.
func nativeFrames(fs []analysis.Frame) []analysis.Frame {
	out := fs[:0:0]
	for _, f := range fs {
		if f.Language != "python" {
			out = append(out, f)
		}
	}
	return out
}

// gdbCrashLWP is the LWP of gdb's current thread: the one marked in `info
// threads` if it was printed, else thread 1, which for a core is the thread
// of the first NT_PRSTATUS note, the one that took the signal.
func gdbCrashLWP(gl *logs.GDBLog) int {
	want := gl.CurrentThread
	if want == 0 {
		want = 1
	}
	for _, t := range gl.Threads {
		if t.Num == want {
			return t.LWP
		}
	}
	return 0
}

// maxAlign caps the frames per thread that are aligned with an LCS table
// (n*m cells); deeper threads are compared index by index.
const maxAlign = 2048

// compareThread aligns one thread's frames with gdb's (longest common
// subsequence of agreeing frames, so one missing frame costs one difference,
// not every frame after it) and returns how many agree; it records the
// unmatched frames in r.Diffs.
func compareThread(r *Result, ft analysis.Thread, gt *logs.GDBThread) int {
	fs, gs := ft.Frames, gt.Frames
	r.Frames += len(gs)
	if len(fs) > maxAlign || len(gs) > maxAlign {
		return compareByIndex(r, ft.ID, fs, gs)
	}
	// lcs[i][j] is the LCS length of fs[i:] and gs[j:].
	n, m := len(fs), len(gs)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case framesAgree(&fs[i], &gs[j]):
				lcs[i][j] = lcs[i+1][j+1] + 1
			case lcs[i+1][j] >= lcs[i][j+1]:
				lcs[i][j] = lcs[i+1][j]
			default:
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	agree := 0
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && framesAgree(&fs[i], &gs[j]) && lcs[i][j] == lcs[i+1][j+1]+1:
			agree++
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			// gdb has a frame here that faultline lacks.
			r.Diffs = append(r.Diffs, Diff{LWP: ft.ID, Index: j, Faultline: "(missing)", GDB: describeGDB(&gs[j])})
			j++
		default:
			// faultline has a frame here that gdb lacks.
			r.Diffs = append(r.Diffs, Diff{LWP: ft.ID, Index: fs[i].Index, Faultline: describeFL(&fs[i]), GDB: "(missing)"})
			i++
		}
	}
	r.FramesAgree += agree
	return agree
}

// compareByIndex compares frame i with frame i, for threads too deep to align.
func compareByIndex(r *Result, lwp int, fs []analysis.Frame, gs []logs.GDBFrame) int {
	agree := 0
	for i := 0; i < max(len(fs), len(gs)); i++ {
		var f *analysis.Frame
		var g *logs.GDBFrame
		if i < len(fs) {
			f = &fs[i]
		}
		if i < len(gs) {
			g = &gs[i]
		}
		if f != nil && g != nil && framesAgree(f, g) {
			agree++
			continue
		}
		r.Diffs = append(r.Diffs, Diff{LWP: lwp, Index: i, Faultline: describeFL(f), GDB: describeGDB(g)})
	}
	r.FramesAgree += agree
	return agree
}

// framesAgree reports whether f and g name the same function and, where gdb
// shows one, the same source file and line.
func framesAgree(f *analysis.Frame, g *logs.GDBFrame) bool {
	if g.Signal || f.Signal || f.Function == analysis.SignalFrameName {
		return g.Signal && (f.Signal || f.Function == analysis.SignalFrameName)
	}
	if normFunc(f.Function) != normFunc(g.Function) {
		return false
	}
	if g.File == "" {
		return true
	}
	return sameFile(f.File, g.File) && f.Line == g.Line
}

// normFunc reduces a function name to what gdb prints in a backtrace: no
// parameter list (faultline may print a demangled symbol with one) and "??"
// for unknown.
func normFunc(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "??"
	}
	// Drop a trailing parameter list "(...)" (and cv-qualifiers after it), but
	// keep "(anonymous namespace)" and operator() inside the name.
	if strings.HasSuffix(s, ")") || strings.HasSuffix(s, ") const") {
		if i := paramListStart(s); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// paramListStart returns the index of the '(' that opens s's trailing
// parameter list, or -1.
func paramListStart(s string) int {
	end := strings.LastIndexByte(s, ')')
	depth := 0
	for i := end; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if strings.HasSuffix(s[:i], "operator") {
					return -1
				}
				return i
			}
		}
	}
	return -1
}

// sameFile reports whether two source paths name the same file: equal after
// cleaning, or one is a suffix of the other at a path boundary (gdb prints
// the line table's name, e.g. "./nptl/futex-internal.c" or "src/x.cpp",
// where faultline may join it with DW_AT_comp_dir).
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	a, b = path.Clean(a), path.Clean(b)
	if a == b {
		return true
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	// A relative name may climb out of the compilation directory
	// ("../sysdeps/x.S"); its joined, cleaned form ends in what follows.
	for strings.HasPrefix(b, "../") {
		b = b[3:]
	}
	return b != "" && b != ".." && strings.HasSuffix(a, "/"+b)
}

func describeFL(f *analysis.Frame) string {
	if f == nil {
		return "(missing)"
	}
	if f.File == "" {
		return fmt.Sprintf("%s [%s]", normFunc(f.Function), f.PC)
	}
	return fmt.Sprintf("%s at %s:%d", normFunc(f.Function), f.File, f.Line)
}

func describeGDB(g *logs.GDBFrame) string {
	if g == nil {
		return "(missing)"
	}
	if g.Signal {
		return analysis.SignalFrameName
	}
	if g.File == "" {
		return fmt.Sprintf("%s [%#x]", normFunc(g.Function), g.PC)
	}
	return fmt.Sprintf("%s at %s:%d", normFunc(g.Function), g.File, g.Line)
}

// Print writes the summary, and up to maxDiffs differing frames (those of the
// crashing thread first).
func (r *Result) Print(w io.Writer, maxDiffs int) {
	fmt.Fprintf(w, "framecheck: threads: faultline %d, gdb %d, matched by LWP %d, agreeing on every frame %d\n",
		r.FaultlineThreads, r.GDBThreads, r.Matched, r.ThreadsAgree)
	fmt.Fprintf(w, "framecheck: frames: %d of gdb's %d agree (%.1f%%)\n", r.FramesAgree, r.Frames, pct(r.FramesAgree, r.Frames))
	if len(r.OnlyFaultline) > 0 {
		fmt.Fprintf(w, "framecheck: %d threads only in faultline: %v\n", len(r.OnlyFaultline), head(r.OnlyFaultline))
	}
	if len(r.OnlyGDB) > 0 {
		fmt.Fprintf(w, "framecheck: %d threads only in gdb: %v\n", len(r.OnlyGDB), head(r.OnlyGDB))
	}
	status := "OK"
	if !r.CrashOK() {
		status = "MISMATCH"
	}
	switch {
	case r.CrashLWP != r.CrashGDBLWP:
		fmt.Fprintf(w, "framecheck: crashing thread: faultline says LWP %d, gdb says LWP %d: %s\n", r.CrashLWP, r.CrashGDBLWP, status)
	case !r.CrashFound:
		fmt.Fprintf(w, "framecheck: crashing thread LWP %d is not in both outputs: %s\n", r.CrashLWP, status)
	default:
		fmt.Fprintf(w, "framecheck: crashing thread LWP %d: %d of %d frames agree: %s\n", r.CrashLWP, r.CrashAgree, r.CrashFrames, status)
	}
	diffs := append([]Diff(nil), r.Diffs...)
	sort.SliceStable(diffs, func(i, j int) bool { return diffs[i].LWP == r.CrashLWP && diffs[j].LWP != r.CrashLWP })
	for i, d := range diffs {
		if i == maxDiffs {
			fmt.Fprintf(w, "framecheck: ... %d more differing frames\n", len(diffs)-maxDiffs)
			break
		}
		fmt.Fprintf(w, "framecheck: LWP %d #%d: faultline %s | gdb %s\n", d.LWP, d.Index, d.Faultline, d.GDB)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func head(s []int) []int {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
