package crashbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// Cached returns a directory that make filled for this key: one made by an
// earlier run is reused from $FAULTLINE_TEST_CACHE/NAME/KEY (by default
// ~/.cache/faultline-test, never the checkout), else make fills a fresh
// temporary directory that is renamed into place when it succeeds, so a
// half-made one is never taken for a finished one. The key hashes every
// input given (sources, tool and package versions).
func Cached(t testing.TB, name string, make func(dir string) error, inputs ...[]byte) string {
	t.Helper()
	root := os.Getenv("FAULTLINE_TEST_CACHE")
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(base, "faultline-test")
	}
	h := sha256.New()
	for _, in := range inputs {
		h.Write([]byte{byte(len(in)), byte(len(in) >> 8), byte(len(in) >> 16), byte(len(in) >> 24)})
		h.Write(in)
	}
	dir := filepath.Join(root, name, hex.EncodeToString(h.Sum(nil))[:16])
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	if err := make(tmp); err != nil {
		os.RemoveAll(tmp)
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if st, serr := os.Stat(dir); serr != nil || !st.IsDir() { // another run's rename won
			t.Fatal(err)
		}
	}
	return dir
}
