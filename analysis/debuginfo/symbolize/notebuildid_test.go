package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestNoteBuildID: the build-id read from PT_NOTE with a few positioned
// reads is the one the whole-file parse finds, for every shared library
// of the system's lib directory; and a truncated file or a non-ELF file
// is not given one.
func TestNoteBuildID(t *testing.T) {
	libs, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/*.so*")
	checked := 0
	for _, p := range libs {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		o, err := object.OpenObject(p)
		if err != nil {
			continue
		}
		want := o.BuildID()
		o.Close()
		got, ok := object.NoteBuildID(p)
		if want != nil && (!ok || !bytes.Equal(got, want)) {
			t.Errorf("%s: %x, %v; whole file says %x", p, got, ok, want)
		}
		checked++
		if checked == 300 {
			break
		}
	}
	if checked < 20 {
		t.Fatalf("only %d libraries checked", checked)
	}
	dir := t.TempDir()
	b, _ := os.ReadFile(systemLibc)
	os.WriteFile(filepath.Join(dir, "short"), b[:200], 0o644)
	os.WriteFile(filepath.Join(dir, "text"), []byte("not an ELF file at all, just words"), 0o644)
	for _, name := range []string{"short", "text"} {
		if id, ok := object.NoteBuildID(filepath.Join(dir, name)); ok {
			t.Errorf("%s: build-id %x", name, id)
		}
	}
}

// FuzzNoteBuildID: any file contents give a build-id the whole-file parse
// agrees with, or none, without panicking or reading past the caps.
func FuzzNoteBuildID(f *testing.F) {
	b, err := os.ReadFile(systemLibc)
	if err == nil {
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			p := filepath.Join(dir, "elf")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			id, ok := object.NoteBuildID(p)
			if ok && len(id) == 0 {
				t.Fatal("ok without a build-id")
			}
		})
	})
}
