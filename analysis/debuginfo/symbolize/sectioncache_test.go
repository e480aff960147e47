package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// TestSectionCache: libc6-dbg's compressed .debug_info is inflated once
// and stored under libc's build-id; the next open of the file maps the
// stored copy (same bytes, no decompression); a damaged copy is not used
// but rebuilt.
func TestSectionCache(t *testing.T) {
	path := systemLibcDebugFile(t)
	dir := t.TempDir()
	object.SetIndexCache(indexcache.New(dir, 0))
	defer object.SetIndexCache(nil)

	read := func() ([]byte, *object.Object) {
		o, err := object.OpenObject(path)
		if err != nil {
			t.Fatal(err)
		}
		s := o.Elf.Section(".debug_info")
		if s == nil || s.Flags&0x800 == 0 {
			t.Fatalf("%s: .debug_info is not SHF_COMPRESSED", path)
		}
		d, _, ok := o.Section(".debug_info")
		if !ok || uint64(len(d)) != s.Size {
			t.Fatalf(".debug_info: %d bytes, ok %v; header says %d", len(d), ok, s.Size)
		}
		return d, o
	}
	first, o1 := read()
	if _, inflated := object.AnonMapped.Load(uintptr(unsafe.Pointer(&first[0]))); !inflated {
		t.Error("first open did not decompress into its own buffer")
	}
	want := bytes.Clone(first)
	o1.Close()
	entries, _ := filepath.Glob(filepath.Join(dir, "*debug_info*.idx"))
	if len(entries) != 1 {
		t.Fatalf("cache entries after the first open: %v", entries)
	}
	if e := object.CachedSection(filepath.Base(entries[0][:len(entries[0])-4])); e == nil {
		t.Fatal("the stored entry does not verify")
	} else {
		e.Close()
	}
	second, o2 := read()
	if !bytes.Equal(second, want) {
		t.Fatal("the cached .debug_info differs from the decompressed one")
	}
	if _, inflated := object.AnonMapped.Load(uintptr(unsafe.Pointer(&second[0]))); inflated {
		t.Error("second open decompressed the section again instead of mapping the cache entry")
	}
	o2.Close()

	// Damage the entry: one flipped byte in the middle of the payload.
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(entries[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	third, o3 := read()
	if !bytes.Equal(third, want) {
		t.Fatal("a damaged cache entry was used")
	}
	o3.Close()
	if b2, err := os.ReadFile(entries[0]); err != nil || bytes.Equal(b2, b) {
		t.Errorf("damaged entry not rebuilt: %v", err)
	}
}
