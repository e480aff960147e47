package cuda_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Crafted GPU core dumps whose tables claim far more rows than the file
// holds (issue 24 item 6): a warp table with sh_entsize 1, and one warp
// table named by many overlapping section headers.

// hugeWarpTableDump is the synthetic dump plus a warp table of n bytes
// with the given sh_entsize, under the dump's CTA table.
func hugeWarpTableDump(t testing.TB, n int, entsize uint64) []byte {
	t.Helper()
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := illegalAddressSpec(t, cubin, cudacoretest.RowSizes{})
	spec.Extra = []cudacoretest.RawSection{{Name: ".cudbg.wptbl.huge", Type: cudacoretest.ShtWPTable,
		Link: ".cudbg.ctatbl.dev0.sm0", Entsize: entsize, Data: make([]byte, n)}}
	b, err := cudacoretest.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// repeatLastSection appends k copies of the last section header: k more
// tables over the same bytes.
func repeatLastSection(b []byte, k int) []byte {
	le := binary.LittleEndian
	shoff, shnum := le.Uint64(b[40:]), int(le.Uint16(b[60:]))
	last := b[shoff+uint64(shnum-1)*64 : shoff+uint64(shnum)*64]
	out := append([]byte(nil), b[:shoff+uint64(shnum)*64]...)
	for range k {
		out = append(out, last...)
	}
	le.PutUint16(out[60:], uint16(shnum+k))
	return out
}

func TestBoundTableRowSize(t *testing.T) {
	b := hugeWarpTableDump(t, 4<<20, 1)
	d := parseUnderBudget(t, b)
	if len(d.Warps) != 2 || !hasProblem(d.Problems, "row size 1 is smaller than") {
		t.Errorf("a 1-byte warp row must be refused with a problem: %d warps, problems %q", len(d.Warps), d.Problems)
	}
	dump := filepath.Join(t.TempDir(), "gpu.nvcudmp")
	if err := os.WriteFile(dump, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", dump},
		Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
	c := boundtest.Crash(t, r)
	// 4 MiB of input: the baseline plus the file (1.2 GiB, killed, before the
	// row size was checked).
	if r.Killed != "" || r.MaxRSSKiB > 96<<10 || !boundtest.HasProblem(c, "row size 1 is smaller than") {
		t.Errorf("bound: maxrss <= 96 MiB and the table refused by a problem; got %v, problems %v", r, c.Problems)
	}
}

func TestBoundTableRowsOverlap(t *testing.T) {
	// 1 MiB of 32-byte warp rows named by 64 section headers: 2M warps if
	// each header were read in full (1.5 GiB of RSS before the row budget).
	b := repeatLastSection(hugeWarpTableDump(t, 1<<20, 32), 63)
	d := parseUnderBudget(t, b)
	if len(d.Warps) > len(b)/32 || !hasProblem(d.Problems, "more rows than the file holds") {
		t.Errorf("rows must stay within the file's size: %d warps from a %d-byte file, problems %q", len(d.Warps), len(b), d.Problems)
	}
	dump := filepath.Join(t.TempDir(), "gpu.nvcudmp")
	if err := os.WriteFile(dump, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", dump},
		Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20}})
	c := boundtest.Crash(t, r)
	if r.Killed != "" || r.MaxRSSKiB > 96<<10 || !boundtest.HasProblem(c, "more rows than the file holds") {
		t.Errorf("bound: maxrss <= 96 MiB and a problem naming the overlap; got %v, problems %v", r, c.Problems)
	}
}

// parseUnderBudget parses b in-process under the fuzz targets' resource
// oracle.
func parseUnderBudget(t *testing.T, b []byte) *cuda.CoreDump {
	var d *cuda.CoreDump
	fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
		var err error
		if d, err = cuda.ParseCoreDump(b); err != nil {
			t.Fatal(err)
		}
	})
	return d
}

func hasProblem(ps []string, substr string) bool {
	for _, p := range ps {
		if strings.Contains(p, substr) {
			return true
		}
	}
	return false
}
