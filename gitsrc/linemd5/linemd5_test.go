package linemd5

import (
	"crypto/md5"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// build compiles main.c and part.c (in src/, one header in include/) from
// dir with the given compiler and flags.
func build(t *testing.T, dir, cc string, flags ...string) string {
	t.Helper()
	for name, text := range map[string]string{
		"src/main.c":     "#include \"part.h\"\nint main(void) { return part(2); }\n",
		"src/part.c":     "#include \"part.h\"\nint part(int x) { return twice(x) + 1; }\n",
		"include/part.h": "static inline int twice(int x) { return 2 * x; }\nint part(int x);\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "prog-"+cc)
	args := append(append([]string{}, flags...), "-Iinclude", "-o", exe, "src/main.c", "src/part.c")
	cmd := exec.Command(cc, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s (apt-get install %s)", cc, err, out, cc)
	}
	return exe
}

// TestClangMD5s: clang -gdwarf-5 gives every source file's MD5; each
// equals the MD5 of the file's bytes (md5 of what was compiled), under the
// path its directory entry and the compilation directory give. gcc 12
// gives none, and that is no error.
func TestClangMD5s(t *testing.T) {
	dir := t.TempDir()
	files, err := ReadELF(build(t, dir, "clang", "-gdwarf-5", "-O1"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][16]byte{}
	for _, f := range files {
		got[f.Path] = f.MD5
	}
	for _, name := range []string{"src/main.c", "src/part.c", "include/part.h"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum, ok := got[filepath.Join(dir, name)]
		if !ok {
			t.Errorf("no MD5 for %s among %v", name, got)
		} else if sum != md5.Sum(b) {
			t.Errorf("%s: MD5 %x, the file's is %x", name, sum, md5.Sum(b))
		}
	}
	files, err = ReadELF(build(t, dir, "gcc", "-g", "-O1"))
	if err != nil || len(files) != 0 {
		t.Errorf("gcc: %d files with an MD5, error %v", len(files), err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte{0x10, 0, 0, 0, 5, 0, 8, 0, 0, 0, 0, 0, 1, 1, 1, 0xfb, 14, 1, 1, 1, 1, 1, 8}, []byte("dir\x00"))
	f.Fuzz(func(t *testing.T, line, str []byte) {
		fuzzbudget.Check(t, len(line)+len(str), fuzzbudget.Default, func() {
			Read(Sections{Line: line, LineStr: str, Str: str}, binary.LittleEndian)
		})
	})
}
