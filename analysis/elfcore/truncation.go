package elfcore

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Truncation says how much of a cut-short core is missing.
type Truncation struct {
	// FileSize is the file's size; WantSize the size its program headers
	// need (the end of the last segment's data).
	FileSize, WantSize uint64
	// Segments counts the memory segments absent or cut short, of Total;
	// From is the address of the first of them.
	Segments, Total int
	From            uint64
	// NotesCut is set when a PT_NOTE segment (threads, registers,
	// mappings) is cut short too.
	NotesCut bool
	// StacksAbsent lists the threads whose stack memory the cut removed.
	StacksAbsent []int
	// cut holds the address ranges whose dumped data is past the end of
	// the file.
	cut [][2]uint64
}

// CutAt reports whether the data of addr was dumped but lies past the
// end of the file (memory the kernel chose not to dump is not cut).
func (t *Truncation) CutAt(addr uint64) bool {
	if t == nil {
		return false
	}
	for _, r := range t.cut {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// truncated records that seg's data is cut to kept bytes by the end of
// the file.
func (c *Core) truncated(seg Segment, load bool, kept uint64) {
	t := c.Truncated
	if t == nil {
		t = &Truncation{FileSize: uint64(len(c.data)), From: ^uint64(0)}
		c.Truncated = t
	}
	t.WantSize = max(t.WantSize, seg.Offset+seg.Filesz)
	if !load {
		t.NotesCut = true
		return
	}
	t.Segments++
	t.cut = append(t.cut, [2]uint64{seg.Vaddr + kept, seg.Vaddr + seg.Filesz})
	if kept == 0 || seg.Vaddr < t.From {
		t.From = min(t.From, seg.Vaddr+kept)
	}
}

// reportMissingMemory states, in one problem, what a truncated core lacks
// and which threads' stacks are not in the core (cut off, or left out by
// /proc/PID/coredump_filter).
func (c *Core) reportMissingMemory() {
	stackless := c.threadsWithoutStack()
	t := c.Truncated
	if t == nil {
		if len(stackless) > 0 {
			c.problem(0, "the core holds no stack memory of %s (/proc/PID/coredump_filter left anonymous memory out): "+
				"their backtraces stop at the first frame", threadList(stackless))
		}
		return
	}
	t.Total = len(c.Segments)
	msg := fmt.Sprintf("the core is truncated: %s of %s are in the file (RLIMIT_CORE `ulimit -c`, a full disk or an "+
		"interrupted copy cut it short); %d of %d memory segments are absent or cut short, from address %#x on",
		byteSize(t.FileSize), byteSize(t.WantSize), t.Segments, t.Total, t.From)
	if t.NotesCut {
		msg += "; the notes (threads, registers, signal, mappings) are cut short too"
	}
	if len(stackless) > 0 {
		msg += "; the stacks of " + threadList(stackless) + " are absent: their backtraces stop at the first frame"
	}
	t.StacksAbsent = stackless
	if len(c.Threads) > 0 && t.CutAt(c.Threads[0].PC()) {
		msg += fmt.Sprintf("; the code at the crashing thread's pc %#x is cut off", c.Threads[0].PC())
	}
	c.problem(int64(t.FileSize), "%s", msg)
}

// threadsWithoutStack lists the threads whose stack pointer lies in a
// mapping the core lists but whose memory it does not hold. (A stack
// pointer in no mapping at all, as after a stack overflow into the guard
// page, is not a missing stack.)
func (c *Core) threadsWithoutStack() []int {
	var out []int
	for i := range c.Threads {
		sp := c.Threads[i].SP()
		if sp == 0 {
			continue
		}
		var b [8]byte
		n, err := c.ReadMemory(sp, b[:])
		var me *MemoryError
		if n < len(b) && errors.As(err, &me) && me.NotDumped && !c.guardPage(sp) {
			out = append(out, c.Threads[i].LWP)
		}
	}
	sort.Ints(out)
	return out
}

// guardPage reports whether addr lies in a mapping with no access (a
// thread stack's PROT_NONE guard, which a stack overflow runs into and the
// kernel never dumps).
func (c *Core) guardPage(addr uint64) bool {
	for i := range c.Segments {
		s := &c.Segments[i]
		if addr >= s.Vaddr && addr < s.End() && s.Flags&(elf.PF_R|elf.PF_W|elf.PF_X) == 0 {
			return true
		}
	}
	return false
}

func threadList(lwps []int) string {
	const show = 8
	parts := make([]string, 0, show)
	for i, l := range lwps {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(lwps)-show))
			break
		}
		parts = append(parts, fmt.Sprint(l))
	}
	if len(lwps) == 1 {
		return "thread " + parts[0]
	}
	return "threads " + strings.Join(parts, ", ")
}

// byteSize writes n in binary units: "2.0 MiB".
func byteSize(n uint64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
