package elfcore

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// Note amplification (issue 18 item 1): small cores whose program headers
// name the same or overlapping note bytes many times. Each is generated
// here and analyzed by the real binary; the bounds are on its peak RSS,
// wall time and the threads it reports.

// replicatedNoteCore returns a core whose n PT_NOTE headers all point at
// one range holding an NT_PRSTATUS and a 1 MiB NT_X86_XSTATE (2 MB file
// for n = 10,000; the fix parses the range once).
func replicatedNoteCore(n int) []byte { return replicatedNoteCoreOf(n, 1<<20) }

// replicatedNoteCoreOf is replicatedNoteCore with an XSAVE note of size
// bytes (FuzzOpen's seed: 2,000 headers naming a 64 KiB note, 125 MiB of
// copies before the fix, over the fuzz allocation budget).
func replicatedNoteCoreOf(n, size int) []byte {
	notes := encodeNotes([]synthNote{
		{"CORE", NT_PRSTATUS, prstatusDesc(27, 100, 11)},
		{"LINUX", NT_X86_XSTATE, make([]byte, size)},
	})
	core := buildCoreRaw(elf.EM_X86_64, [][]byte{notes}, nil)
	return replicatePhdr(core, n)
}

// replicatePhdr rewrites a one-PT_NOTE core into one with n program headers
// that are all copies of the first.
func replicatePhdr(core []byte, n int) []byte {
	ph := core[ehdr64Size : ehdr64Size+phdr64Size]
	body := core[ehdr64Size+phdr64Size:]
	shift := uint64((n - 1) * phdr64Size)
	out := append([]byte(nil), core[:ehdr64Size]...)
	le.PutUint16(out[56:], 0xffff) // PN_XNUM: e_phnum in section header 0
	for i := 0; i < n; i++ {
		p := append([]byte(nil), ph...)
		le.PutUint64(p[8:], le.Uint64(p[8:])+shift)
		out = append(out, p...)
	}
	out = append(out, body...)
	return withSection0(out, uint32(n))
}

// withSection0 appends a section header 0 whose sh_info holds phnum.
func withSection0(core []byte, phnum uint32) []byte {
	le.PutUint64(core[40:], uint64(len(core))) // e_shoff
	le.PutUint16(core[58:], shdr64Size)
	le.PutUint16(core[60:], 1)
	sh := make([]byte, shdr64Size)
	le.PutUint32(sh[44:], phnum)
	return append(core, sh...)
}

// overlappingNoteCore returns a core with one thread and n PT_NOTE ranges
// that all differ but overlap: range i starts with its own 1 MiB "LINUX"
// note header at offset 32*i of one shared region, so every range is
// distinct and each names 1 MiB of register-set bytes.
func overlappingNoteCore(n int) []byte {
	region := make([]byte, n*32+32+1<<20)
	for i := 0; i < n; i++ {
		h := region[i*32:]
		le.PutUint32(h, 6) // "LINUX\0"
		le.PutUint32(h[4:], 1<<20)
		le.PutUint32(h[8:], 0x4ff) // an undecoded LINUX note: kept raw per thread
		copy(h[12:], "LINUX\x00\x00\x00")
	}
	first := encodeNotes([]synthNote{{"CORE", NT_PRSTATUS, prstatusDesc(27, 100, 11)}})
	core := buildCoreRaw(elf.EM_X86_64, [][]byte{first, region}, nil)
	return fanOutRange(core, 1, n, 32, uint64(32+1<<20))
}

// fanOutRange replaces program header i (a PT_NOTE) by n headers whose
// ranges start stride bytes apart and are size bytes long.
func fanOutRange(core []byte, i, n int, stride, size uint64) []byte {
	nph := int(le.Uint16(core[56:]))
	ph := core[ehdr64Size : ehdr64Size+nph*phdr64Size]
	body := core[ehdr64Size+nph*phdr64Size:]
	shift := uint64((n - 1) * phdr64Size)
	out := append([]byte(nil), core[:ehdr64Size]...)
	le.PutUint16(out[56:], 0xffff)
	for j := 0; j < nph; j++ {
		p := ph[j*phdr64Size : (j+1)*phdr64Size]
		copies := 1
		if j == i {
			copies = n
		}
		for k := 0; k < copies; k++ {
			q := append([]byte(nil), p...)
			le.PutUint64(q[8:], le.Uint64(p[8:])+shift+uint64(k)*stride)
			if j == i {
				le.PutUint64(q[32:], size)
			}
			out = append(out, q...)
		}
	}
	out = append(out, body...)
	return withSection0(out, uint32(nph-1+n))
}

// overlappingThreadsCore returns a core of n overlapping PT_NOTE ranges,
// range i starting with an NT_PRSTATUS header 20*i bytes into one region:
// n distinct threads out of 20*n bytes.
func overlappingThreadsCore(n int) []byte {
	desc := prstatusDesc(27, 100, 11)
	region := make([]byte, n*20+len(desc)+20)
	for i := n - 1; i >= 0; i-- {
		h := region[i*20:]
		le.PutUint32(h, 5)
		le.PutUint32(h[4:], uint32(len(desc)))
		le.PutUint32(h[8:], NT_PRSTATUS)
		copy(h[12:], "CORE\x00\x00\x00\x00")
	}
	core := buildCoreRaw(elf.EM_X86_64, [][]byte{region}, nil)
	return fanOutRange(core, 0, n, 20, uint64(20+len(desc)))
}

func analyzeBound(t *testing.T, core []byte, lim boundtest.Limits) boundtest.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "core")
	if err := os.WriteFile(path, core, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("crafted core: %d bytes", len(core))
	return boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", path}, Limits: lim})
}

func TestBoundReplicatedNotes(t *testing.T) {
	r := analyzeBound(t, replicatedNoteCore(10000), boundtest.Limits{Wall: 45 * time.Second, RSSKiB: 1 << 20})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("10,000 headers naming one 1 MiB note: %v\n%s", r, r.Stderr)
	}
	if r.MaxRSSKiB > 200<<10 || r.CPUTime > 10*time.Second {
		t.Errorf("bound: maxrss <= 200 MiB, cpu <= 10 s; got %v", r)
	}
	c := boundtest.Crash(t, r)
	if len(c.Threads) != 1 || !boundtest.HasProblem(c, "repeat a note range") {
		t.Errorf("want 1 thread and a problem naming the repeated range; got %d threads, problems %v", len(c.Threads), c.Problems)
	}
}

func TestBoundOverlappingNotes(t *testing.T) {
	r := analyzeBound(t, overlappingNoteCore(10000), boundtest.Limits{Wall: 45 * time.Second, RSSKiB: 1 << 20})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("10,000 distinct ranges over one region of 1 MiB notes: %v\n%s", r, r.Stderr)
	}
	if r.MaxRSSKiB > 400<<10 || r.CPUTime > 10*time.Second {
		t.Errorf("bound: maxrss <= 400 MiB (128 MiB copy budget), cpu <= 10 s; got %v", r)
	}
	if c := boundtest.Crash(t, r); !boundtest.HasProblem(c, "register-set notes exceed") {
		t.Errorf("no problem says the note copy budget was reached: %v", c.Problems)
	}
}

func TestBoundOverlappingThreads(t *testing.T) {
	r := analyzeBound(t, overlappingThreadsCore(100000), boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("100,000 overlapping NT_PRSTATUS ranges: %v\n%s", r, r.Stderr)
	}
	c := boundtest.Crash(t, r)
	if len(c.Threads) > maxThreads || !boundtest.HasProblem(c, "threads; ignoring the rest") {
		t.Errorf("want at most %d threads and a problem; got %d", maxThreads, len(c.Threads))
	}
	if r.MaxRSSKiB > 512<<10 || r.CPUTime > 20*time.Second {
		t.Errorf("bound: maxrss <= 512 MiB, cpu <= 20 s; got %v", r)
	}
}
