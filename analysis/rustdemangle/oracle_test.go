package rustdemangle_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/rustdemangle"
)

// debianRustc is Debian's rustc (package rustc): the one the README's test
// command installs, whatever rustup put first in PATH.
const debianRustc = "/usr/bin/rustc"

// rustProgram builds testdata/names.rs with Debian's rustc in the given
// symbol mangling ("legacy", rustc 1.63's default, or "v0"), once per
// content (crashlab's cache).
func rustProgram(t *testing.T, mangling string) string {
	t.Helper()
	command := []string{debianRustc, "-o", "$OUT", "names.rs"}
	if mangling != "legacy" {
		command = append(command, "-C", "symbol-mangling-version="+mangling)
	}
	return crashlab.BuildCached(t, crashlab.Recipe{
		Name:    "names-" + mangling,
		Command: command,
		Sources: []string{"names.rs"},
		Dir:     "testdata",
	})
}

// rustSymbols lists the program's symbol table names that are Rust ones
// by their prefix ("_ZN…E" ending in a hash, or "_R"): every one must
// demangle.
func rustSymbols(t *testing.T, exe string) []string {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	legacy := regexp.MustCompile(`^_ZN.*17h[0-9a-f]{16}E(\..*)?$`)
	seen := map[string]bool{}
	var out []string
	for _, s := range syms {
		if (strings.HasPrefix(s.Name, "_R") || legacy.MatchString(s.Name)) && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	return out
}

// cxxfilt runs binutils' c++filt (with args) on names, one per line.
func cxxfilt(t *testing.T, names []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("c++filt", args...)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("c++filt %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("c++filt printed %d lines for %d names", len(lines), len(names))
	}
	return lines
}

// TestAgainstCxxfilt demangles every Rust symbol of a program built here
// with Debian's rustc 1.63, in the legacy mangling (the standard library's
// symbols are legacy in both builds) and in v0, and compares each name
// with binutils' c++filt: c++filt -i for the default output (libiberty
// without DMGL_VERBOSE, as gdb names DWARF-less frames' demangled linkage
// names), plain c++filt for Verbose.
func TestAgainstCxxfilt(t *testing.T) {
	for _, tool := range []string{debianRustc, "c++filt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (.ci/install.d/rust.sh installs rustc and binutils)", tool)
		}
	}
	for _, mangling := range []string{"legacy", "v0"} {
		t.Run(mangling, func(t *testing.T) {
			names := rustSymbols(t, rustProgram(t, mangling))
			v0Names := 0
			for _, n := range names {
				if strings.HasPrefix(n, "_R") {
					v0Names++
				}
			}
			if len(names) < 500 || mangling == "v0" && v0Names < 300 {
				t.Fatalf("%d Rust symbols (%d v0): the build is not what the test expects", len(names), v0Names)
			}
			for _, verbose := range []bool{false, true} {
				var args []string
				if !verbose {
					args = []string{"-i"}
				}
				want := cxxfilt(t, names, args...)
				bad := 0
				for i, n := range names {
					if got, ok := rustdemangle.Demangle(n, rustdemangle.Options{Verbose: verbose}); !ok || got != want[i] {
						if bad++; bad <= 10 {
							t.Errorf("%s (verbose %v):\n got  %q (%v)\n want %q (c++filt)", n, verbose, got, ok, want[i])
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d names differ from c++filt %v", bad, len(names), args)
				} else {
					t.Logf("%d Rust names (%d v0), verbose %v: all equal to c++filt %v", len(names), v0Names, verbose, args)
				}
			}
		})
	}
}

// TestAgainstGDBMinimalSymbols: gdb names a frame without debug info by
// its minimal symbol, which it demangles verbose (a legacy name's hash, a
// v0 name's crate disambiguators). Every Rust function gdb's `info
// functions` lists as a non-debugging symbol is named the same by
// Demangle with Verbose.
func TestAgainstGDBMinimalSymbols(t *testing.T) {
	for _, tool := range []string{debianRustc, "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed", tool)
		}
	}
	for _, mangling := range []string{"legacy", "v0"} {
		t.Run(mangling, func(t *testing.T) {
			exe := rustProgram(t, mangling)
			byAddr := map[uint64][]string{}
			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			syms, _ := f.Symbols()
			f.Close()
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
					byAddr[s.Value] = append(byAddr[s.Value], s.Name)
				}
			}
			compared := compareGDBFunctions(t, exe, byAddr)
			if compared < 300 {
				t.Errorf("only %d Rust functions compared with gdb", compared)
			}
			t.Logf("%d Rust functions named as gdb names them", compared)
		})
	}
}

// compareGDBFunctions checks gdb's non-debugging symbols of exe against
// Demangle of the symbols at the same address, and returns how many Rust
// names it compared.
func compareGDBFunctions(t *testing.T, exe string, byAddr map[uint64][]string) int {
	t.Helper()
	out, err := exec.Command("gdb", "-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "info functions", exe).Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	line := regexp.MustCompile(`^0x([0-9a-f]+)  (.+)$`)
	compared := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		var got []string
		for _, s := range byAddr[addr] {
			if d, ok := rustdemangle.Demangle(s, rustdemangle.Options{Verbose: true}); ok {
				got = append(got, d)
			}
		}
		if len(got) == 0 {
			continue
		}
		compared++
		if !contains(got, m[2]) {
			t.Errorf("%s at 0x%x: gdb %q, Demangle %q", filepath.Base(exe), addr, m[2], got)
		}
	}
	return compared
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
