package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// update rewrites the golden files: go test ./server -run TestName -update.
var update = flag.Bool("update", false, "rewrite server/testdata/golden files")

// checkDiagnosticsGolden compares the diagnostics published for uris with
// testdata/golden/NAME, URIs under root written as file:///ROOT.
func checkDiagnosticsGolden(t *testing.T, e *Env, name, root string, uris []uri.URI) {
	t.Helper()
	byFile := map[string][]protocol.Diagnostic{}
	for _, u := range uris {
		byFile[string(u)] = e.Diagnostics(u)
	}
	keys := make([]string, 0, len(byFile))
	for k := range byFile {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range keys {
		raw, err := protocol.Marshal(byFile[k])
		if err != nil {
			t.Fatal(err)
		}
		var ind bytes.Buffer
		if err := json.Indent(&ind, raw, "  ", "  "); err != nil {
			t.Fatal(err)
		}
		name, _ := json.Marshal(k)
		b.WriteString("  " + string(name) + ": " + ind.String())
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	got := strings.ReplaceAll(b.String(), string(uri.File(root)), "file:///ROOT")
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("diagnostics differ from %s (go test ./server -run %s -update rewrites it):\n%s", path, t.Name(), got)
	}
}
