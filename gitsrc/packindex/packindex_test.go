package packindex

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestIndexMatchesGit: the index of packs git made (whole objects,
// OFS_DELTA chains, REF_DELTA bases: git pack-objects with and without
// --delta-base-offset) is byte for byte the one `git index-pack` writes.
func TestIndexMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (apt-get install git)")
	}
	repo := t.TempDir()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org"}, args...)...)
		cmd.Dir = repo
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "init", "-q")
	var text strings.Builder
	for i := range 120 {
		for j := range 40 {
			text.WriteString(strings.Repeat("line ", j%7) + string(rune('a'+(i+j)%26)) + "\n")
		}
		os.WriteFile(filepath.Join(repo, "f.txt"), []byte(text.String()), 0o644)
		os.WriteFile(filepath.Join(repo, "g.txt"), []byte(strings.Repeat(text.String()[:min(text.Len(), 3000)], 2)), 0o644)
		run("", "add", "-A")
		run("", "commit", "-qm", "c")
	}
	objects := run("", "rev-list", "--objects", "--all")
	var ids strings.Builder
	for _, l := range strings.Split(objects, "\n") {
		ids.WriteString(strings.Fields(l)[0] + "\n")
	}
	for _, args := range [][]string{{"--delta-base-offset"}, {}} {
		dir := t.TempDir()
		name := run(ids.String(), append([]string{"pack-objects", "--window=50", "--depth=50", filepath.Join(dir, "p")}, args...)...)
		pack := filepath.Join(dir, "p-"+name+".pack")
		want, err := os.ReadFile(filepath.Join(dir, "p-"+name+".idx"))
		if err != nil {
			t.Fatal(err)
		}
		ours := filepath.Join(dir, "ours.idx")
		sum, err := Index(pack, ours)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(ours)
		if sum.String() != name || !bytes.Equal(got, want) {
			t.Errorf("%v: checksum %s (git %s), index %d bytes equal to git's: %v", args, sum, name, len(got), bytes.Equal(got, want))
		}
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "p.pack")
		os.WriteFile(p, b, 0o644)
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			index(p, filepath.Join(dir, "p.idx"), 1<<20)
		})
	})
}
