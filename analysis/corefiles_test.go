package analysis_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/internal/testgz"
)

// readCore returns the uncompressed bytes of a native corpus core.
func readCore(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testgz.GunzipTemp(t, filepath.Join(corpus, "cores", name+".core.gz"), "core"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
