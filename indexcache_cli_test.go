package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/internal/testgz"
)

// TestIndexCacheSubprocess runs the built binary on corpus cores whose
// frames reach libc (its libc6-dbg debug file has compressed sections) and
// libstdc++ (symbols only): the first run stores the decompressed sections
// under --index-cache DIR, the second maps them and
// prints the same model, a damaged entry is ignored and rebuilt with the
// model unchanged, and --index-cache off writes no cache at all (not even
// in $XDG_CACHE_HOME).
func TestIndexCacheSubprocess(t *testing.T) {
	bin := buildFaultlineBinary(t)
	t.Run("assert_abort", func(t *testing.T) {
		checkIndexCache(t, bin, "assert_abort", []string{"*-debug_info-*.idx"}, "abort")
	})
	t.Run("uncaught_throw", func(t *testing.T) {
		// libstdc++ has symbols only: a module with few frames' pcs has its
		// symbol table scanned, not sorted into an index (7ddc76a), so what
		// is stored is libc's debug sections the frames read.
		checkIndexCache(t, bin, "uncaught_throw", []string{"*-debug_info-*.idx", "*-debug_line-*.idx"}, "__cxa_throw")
	})
}

func checkIndexCache(t *testing.T, bin, name string, stored []string, function string) {
	core := testgz.GunzipTemp(t, "testdata/native/cores/"+name+".core.gz", "core")
	exe := "testdata/native/bin/" + name
	dir := filepath.Join(t.TempDir(), "index")
	xdg := t.TempDir()
	analyze := func(cache string) []byte {
		t.Helper()
		cmd := exec.Command(bin, "analyze", "--json", "--offline", "--index-cache", cache, "--exe", exe, core)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+xdg)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("analyze --index-cache %s: %v\n%s", cache, err, stderr.String())
		}
		return out
	}
	first := analyze(dir)
	entries, _ := filepath.Glob(filepath.Join(dir, "*.idx"))
	if len(entries) == 0 {
		t.Fatalf("no cache entries in %s after the first run", dir)
	}
	for _, pat := range stored {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) == 0 {
			t.Errorf("no entry %s stored after the first run", pat)
		}
	}
	if !bytes.Contains(first, []byte(function)) {
		t.Fatalf("model does not reach %s: %.400s", function, first)
	}
	if second := analyze(dir); !bytes.Equal(second, first) {
		t.Error("the run from the cache printed another model")
	}
	// Each entry's first payload byte is damaged: a warm run verifies the
	// chunks it reads (from the first on), so it must see the damage, not
	// use the entry, and store it again. A byte past what the frames read
	// (the last, say) is never read, and such an entry is rightly kept.
	damaged := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		b[firstPayloadByte(t, b)] ^= 0xff
		os.WriteFile(e, b, 0o644)
		damaged[e] = b
	}
	if third := analyze(dir); !bytes.Equal(third, first) {
		t.Error("with damaged cache entries the model changed")
	}
	for e, bad := range damaged {
		if b, err := os.ReadFile(e); err != nil || bytes.Equal(b, bad) {
			t.Errorf("damaged entry %s not rebuilt: %v", filepath.Base(e), err)
		}
	}
	if fourth := analyze("off"); !bytes.Equal(fourth, first) {
		t.Error("--index-cache off printed another model")
	}
	if left, _ := filepath.Glob(filepath.Join(xdg, "faultline", "index", "*")); len(left) != 0 {
		t.Errorf("--index-cache given, yet the default cache was written: %v", left)
	}
}

// firstPayloadByte is the offset of an index-cache entry's first payload
// byte: after the 32-byte header (whose key length is the u32 at 12 and
// payload length the u64 at 16), the key and the chunk table (a u32 per
// 256 KiB of payload).
func firstPayloadByte(t *testing.T, entry []byte) int {
	t.Helper()
	if len(entry) < 32 {
		t.Fatalf("cache entry of %d bytes", len(entry))
	}
	klen := int(binary.LittleEndian.Uint32(entry[12:]))
	plen := int(binary.LittleEndian.Uint64(entry[16:]))
	off := 32 + klen + 4*((plen+256<<10-1)/(256<<10))
	if plen == 0 || off >= len(entry) {
		t.Fatalf("cache entry with key length %d, payload %d bytes: no payload byte in its %d bytes", klen, plen, len(entry))
	}
	return off
}
