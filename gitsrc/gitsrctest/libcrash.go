package gitsrctest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LibBuild builds a shared library from a tag of a built upstream history
// as a distribution does — -g -O2, under a build prefix that is removed
// afterwards — and a program that links it and crashes in it, with the
// program's core.
type LibBuild struct {
	History History
	Tag     string
	// Prefix names the build directory (e.g. "zlib-1.2.11"); Dir is the
	// directory of the tree the library's sources are in ("expat/lib").
	Prefix, Dir string
	// Files are written into Dir before compiling (configuration headers).
	Files map[string]string
	// Sources are compiled in Dir (gcc for .c, g++ for .cc) with CFlags.
	Sources []string
	CFlags  []string
	// Lib is the library's file name, Soname its DT_SONAME, Version its
	// version script in Dir ("" for none).
	Lib, Soname, Version string
	// Program is the crashing program's file name and ProgramSource its
	// text; Link the flag that links the library ("-lz").
	Program, ProgramSource, Link string
}

// LibCrash is a built history and a crash in a library built from it.
type LibCrash struct {
	// Dir holds work/ (the whole history) and srv/NAME.git.
	Dir, Work string
	// Lib is the library; Exe the crashing program; Core its core.
	Lib, Exe, Core string
}

// Build builds (once per set of inputs, in the test cache) the history,
// the library, the program and its core.
func (b LibBuild) Build() (*LibCrash, error) {
	dir, err := b.History.Build()
	if err != nil {
		return nil, err
	}
	z := &LibCrash{Dir: dir, Work: filepath.Join(dir, "work")}
	key := sha256.Sum256([]byte(fmt.Sprintf("%s\nlib-v1\n%+v", dir, b)))
	crash := filepath.Join(filepath.Dir(dir), b.History.Name+"-crash-"+hex.EncodeToString(key[:8]))
	z.Lib = filepath.Join(crash, "lib", b.Lib)
	z.Exe = filepath.Join(crash, "bin", strings.TrimSuffix(b.Program, filepath.Ext(b.Program)))
	if err := cachedDir(crash, func() error { return b.build(z, crash) }); err != nil {
		return nil, err
	}
	cores, _ := filepath.Glob(filepath.Join(crash, "core", "*core*"))
	if len(cores) == 0 {
		return nil, fmt.Errorf("%s: no core", crash)
	}
	z.Core = cores[0]
	return z, nil
}

func (b LibBuild) build(z *LibCrash, crash string) error {
	prefix := filepath.Join(crash, "build", b.Prefix)
	src := filepath.Join(prefix, b.Dir)
	libDir := filepath.Dir(z.Lib)
	for _, d := range []string{prefix, libDir, filepath.Dir(z.Exe)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if _, err := Run(z.Work, "sh", "-c", "git archive "+b.Tag+" | tar -x -C '"+prefix+"'"); err != nil {
		return err
	}
	for name, text := range b.Files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	cc := "gcc"
	var objs []string
	for _, s := range b.Sources {
		if strings.HasSuffix(s, ".cc") {
			cc = "g++"
		}
		obj := strings.TrimSuffix(s, filepath.Ext(s)) + ".o"
		args := append([]string{"-g", "-O2", "-fPIC", "-fno-semantic-interposition"}, b.CFlags...)
		if _, err := Run(src, cc, append(args, "-c", s, "-o", obj)...); err != nil {
			return err
		}
		objs = append(objs, obj)
	}
	args := []string{"-shared", "-Wl,-soname," + b.Soname, "-o", z.Lib}
	if b.Version != "" {
		args = append(args, "-Wl,--version-script,"+b.Version)
	}
	if _, err := Run(src, cc, append(args, objs...)...); err != nil {
		return err
	}
	for _, link := range []string{b.Soname, strings.SplitN(b.Soname, ".so", 2)[0] + ".so"} {
		if err := os.Symlink(b.Lib, filepath.Join(libDir, link)); err != nil {
			return err
		}
	}
	prog := filepath.Join(crash, b.Program)
	if err := os.WriteFile(prog, []byte(b.ProgramSource), 0o644); err != nil {
		return err
	}
	if _, err := Run(crash, cc, "-g", "-O0", "-I", src, "-o", z.Exe, prog, "-L", libDir, b.Link, "-Wl,-rpath,"+libDir); err != nil {
		return err
	}
	// The build prefix goes away, as a distribution's build directory does.
	if err := os.RemoveAll(filepath.Join(crash, "build")); err != nil {
		return err
	}
	_, err := DumpCore(crash, z.Exe)
	return err
}
