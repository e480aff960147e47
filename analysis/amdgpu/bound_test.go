package amdgpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Compressed offload bundle bombs through the real `faultline gpu-lines`
// (issue 24 item 4).

// TestBoundCCOBBomb: one 4 MiB bundle whose zlib stream expands to the
// 1 GiB its header states (within 256 times its size, the old ratio cap):
// refused from its header, before anything is allocated.
func TestBoundCCOBBomb(t *testing.T) {
	bomb := filepath.Join(t.TempDir(), "bomb.ccob")
	if err := os.WriteFile(bomb, boundtest.ZlibCCOB(1<<30, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"gpu-lines", bomb, "0x0"}, Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 2 << 20}})
	if r.Killed != "" || r.Exit == 0 || !strings.Contains(r.Stderr, "decompression budget") || r.MaxRSSKiB > 64<<10 || r.CPUTime > 2*time.Second {
		t.Errorf("bound: refused naming the decompression budget, maxrss <= 64 MiB, cpu <= 2 s; got %v\n%s", r, r.Stderr)
	}
}

// TestBoundCCOBFileBudget: three bundles in one file, each stating 100 MiB
// (zeros: they decompress, then hold no bundle): the first two spend the
// file's 256 MiB budget, the third is refused, and memory stays near one
// bundle's size.
func TestBoundCCOBFileBudget(t *testing.T) {
	var file []byte
	for range 3 {
		b := boundtest.ZlibCCOB(100<<20, 2<<20)
		file = append(file, b...)
		for len(file)%4096 != 0 {
			file = append(file, 0)
		}
	}
	path := filepath.Join(t.TempDir(), "three.ccob")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	images, problems, _ := Extract(file)
	if len(images) != 0 || len(problems) != 3 || !strings.Contains(problems[2], "decompression budget") {
		t.Fatalf("want three problems, the third over the budget: %q", problems)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"gpu-lines", path, "0x0"}, Limits: boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 2 << 20}})
	if r.Killed != "" || r.Exit == 0 || r.MaxRSSKiB > 320<<10 {
		t.Errorf("bound: the third bundle refused, maxrss <= 320 MiB; got %v\n%s", r, r.Stderr)
	}
}
