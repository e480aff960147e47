package realworld_test

import (
	"os"
	"testing"
)

var tempRoot string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "faultline-realworld-")
	if err != nil {
		panic(err)
	}
	tempRoot = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// mustTempDir is a directory that lives until the test binary exits
// (binaries built once are shared by tests).
func mustTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp(tempRoot, "bin-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
