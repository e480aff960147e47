package analysis_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// TestOpenDamagedCores: damaged real cores open with partial results and
// problems, or fail with a clear error — never a panic or a hang.
func TestOpenDamagedCores(t *testing.T) {
	good := readCore(t, "null_inline")
	bin, _ := filepath.Abs(filepath.Join(corpus, "bin", "null_inline"))
	rng := rand.New(rand.NewSource(1))
	cases := map[string][]byte{
		"empty":       {},
		"random":      randomBytes(rng, 4096),
		"elf-header":  good[:64],
		"headers":     good[:4096],
		"half":        good[:len(good)/2],
		"no-tail":     good[:len(good)-1],
		"text":        []byte("Program terminated with signal SIGSEGV\n"),
		"flipped-hdr": flip(good, rng, 0, 64+56*8, 40),
	}
	for i := 0; i < 20; i++ {
		cases["flipped-"+string(rune('a'+i))] = flip(good, rng, 0, min(len(good), 1<<14), 64)
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "core")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var c *analysis.Crash
			var err error
			go func() {
				defer close(done)
				c, err = analysis.Open(path, analysis.Options{Exe: bin})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Open hangs on a damaged core")
			}
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error message")
				}
				return
			}
			if c.Schema != analysis.Schema {
				t.Fatalf("schema %q", c.Schema)
			}
		})
	}
	// A truncated core keeps what it still has: the notes are at the front.
	path := filepath.Join(t.TempDir(), "core")
	os.WriteFile(path, good[:len(good)/2], 0o644)
	c, err := analysis.Open(path, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatalf("half a core: %v", err)
	}
	if len(c.Threads) != 1 || c.Signal == nil || c.Signal.Name != "SIGSEGV" {
		t.Fatalf("half a core lost its notes: threads=%d signal=%+v", len(c.Threads), c.Signal)
	}
	if len(c.Problems) == 0 {
		t.Fatal("half a core reported no problems")
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

func flip(src []byte, rng *rand.Rand, lo, hi, n int) []byte {
	b := bytes.Clone(src)
	for i := 0; i < n && hi > lo; i++ {
		b[lo+rng.Intn(hi-lo)] ^= byte(1 + rng.Intn(255))
	}
	return b
}
