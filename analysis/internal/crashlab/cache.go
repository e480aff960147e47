package crashlab

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// CacheDir is where built test programs are kept between runs:
// $FAULTLINE_TEST_CACHE/crashlab (the test command's cache, by default
// ~/.cache/faultline-test), never the checkout.
func CacheDir() (string, error) {
	root := os.Getenv("FAULTLINE_TEST_CACHE")
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		root = filepath.Join(base, "faultline-test")
	}
	return filepath.Join(root, "crashlab"), nil
}

// A Recipe says how to build one test program: the command (compiler and
// arguments, where "$OUT" stands for the output path and "$DIR" for the
// sources' directory), the files it reads, and any other input that
// changes the result (a tool's version). Build runs it in a copy of the
// sources' directory.
type Recipe struct {
	// Name is the output's file name ("kinds", "ext.cpython-311-x86_64-linux-gnu.so").
	Name string
	// Command is the build command; its first word is looked up in PATH.
	Command []string
	// Sources are the files the command reads, relative to Dir.
	Sources []string
	Dir     string
	// Env is added to the command's environment.
	Env []string
	// Extra is hashed with the rest (e.g. the output of `pkg-config --cflags`).
	Extra string
}

// cached serialises builds of one key and lets builds of different keys
// run at once.
var cached = struct {
	sync.Mutex
	keys map[string]*sync.Mutex
}{keys: map[string]*sync.Mutex{}}

// BuildCached builds the recipe once per content: its key hashes the
// command, the sources' contents, the compiler's identity (its resolved
// path, size, modification time and `--version`) and Extra. A build of the
// same key by an earlier run is reused from CacheDir. It returns the
// output's path.
func BuildCached(t testing.TB, r Recipe) string {
	t.Helper()
	key, err := r.key()
	if err != nil {
		t.Fatal(err)
	}
	root, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, key)
	out := filepath.Join(dir, r.Name)
	cached.Lock()
	mu := cached.keys[key]
	if mu == nil {
		mu = &sync.Mutex{}
		cached.keys[key] = mu
	}
	cached.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.build(dir); err != nil {
		t.Fatal(err)
	}
	return out
}

// build writes the sources into dir/src and runs the recipe there (so
// DW_AT_comp_dir is a directory that stays), writing the output under a
// temporary name that is renamed into place last: a half-made build is
// never taken for a finished one.
func (r Recipe) build(dir string) error {
	src := filepath.Join(dir, "src")
	for _, s := range r.Sources {
		b, err := os.ReadFile(filepath.Join(r.Dir, s))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, s)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, s), b, 0o644); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", r.Name, os.Getpid()))
	args := r.expand(tmp, src)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), r.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return os.Rename(tmp, filepath.Join(dir, r.Name))
}

// expand substitutes $OUT and $DIR in the command.
func (r Recipe) expand(out, dir string) []string {
	args := make([]string, len(r.Command))
	for i, a := range r.Command {
		args[i] = strings.NewReplacer("$OUT", out, "$DIR", dir).Replace(a)
	}
	return args
}

// key hashes everything the build's result depends on.
func (r Recipe) key() (string, error) {
	if len(r.Command) == 0 {
		return "", fmt.Errorf("recipe %s has no command", r.Name)
	}
	h := sha256.New()
	fmt.Fprintf(h, "name %q\ncommand %q\nenv %q\nextra %q\n", r.Name, r.Command, r.Env, r.Extra)
	id, err := toolIdentity(r.Command[0])
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "tool %s\n", id)
	for _, s := range r.Sources {
		b, err := os.ReadFile(filepath.Join(r.Dir, s))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "source %q %d\n", s, len(b))
		h.Write(b)
	}
	return r.Name + "-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

var tools = struct {
	sync.Mutex
	ids map[string]string
}{ids: map[string]string{}}

// toolIdentity names a compiler's exact build: its resolved path, size,
// modification time and what `--version` prints.
func toolIdentity(tool string) (string, error) {
	tools.Lock()
	defer tools.Unlock()
	if id, ok := tools.ids[tool]; ok {
		return id, nil
	}
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", fmt.Errorf("%s is required (the README's test command installs it): %v", tool, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	version, _ := exec.Command(p, "--version").CombinedOutput()
	id := fmt.Sprintf("%s %d %d %q", real, st.Size(), st.ModTime().UnixNano(), version)
	tools.ids[tool] = id
	return id, nil
}
