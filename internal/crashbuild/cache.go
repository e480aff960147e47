package crashbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// completeMarker, in a cached directory, says that make finished there.
const completeMarker = ".complete"

// Cached returns a directory that make filled for this key: one made by an
// earlier run is reused from $FAULTLINE_TEST_CACHE/NAME/KEY (by default
// ~/.cache/faultline-test, never the checkout). make runs in that
// directory itself, so the paths a build or a core records there stay
// true, under a lock file that serialises test processes, and a marker
// written last tells a finished directory from a half-made one (which is
// emptied and made again). The key hashes every input given (sources,
// tool and package versions).
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
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, completeMarker)); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := make(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, completeMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
