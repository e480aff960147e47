// Command gen writes the C++ sources and Makefile of the faultline benchmark
// corpus: a shared library libbig.so carrying hundreds of megabytes of DWARF,
// and a program bigjob that links it, parks 256 threads in distinct libbig.so
// call chains, touches a heap of N GiB and crashes one thread with SIGSEGV a
// few inlined levels deep inside libbig.so.
//
// Usage:
//
//	go run ./bench/gen -out DIR [-units 120] [-types 10]
//
// The output is deterministic: the same flags always produce the same bytes,
// so bench/run.sh can key its build cache on a hash of this generator.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

// Workers is the number of distinct worker entry points (thread groups);
// thread i of bigjob runs worker_(i % Workers).
const Workers = 32

// crashUnit is the translation unit that holds the crashing call chain.
const crashUnit = Workers

func main() {
	out := flag.String("out", "", "directory to write the sources into (required)")
	units := flag.Int("units", 120, "number of libbig.so translation units")
	types := flag.Int("types", 10, "record types (each with its own container instantiations) per unit")
	flag.Parse()
	if *out == "" {
		log.Fatal("gen: -out DIR is required")
	}
	if *units <= crashUnit || *types < 0 {
		log.Fatalf("gen: want -units > %d and -types >= 0", crashUnit)
	}
	if err := generate(*out, *units, *types); err != nil {
		log.Fatal(err)
	}
}

// generate writes the corpus sources and Makefile into dir.
func generate(dir string, units, types int) error {
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		return err
	}
	write := func(name string, body func(w *bufio.Writer)) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		body(w)
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("src/big.h", writeHeader); err != nil {
		return err
	}
	for u := 0; u < units; u++ {
		if err := write(fmt.Sprintf("src/unit_%03d.cpp", u), func(w *bufio.Writer) { writeUnit(w, u, types) }); err != nil {
			return err
		}
	}
	if err := write("src/park.cpp", func(w *bufio.Writer) { writePark(w, units) }); err != nil {
		return err
	}
	if err := write("src/bigjob.cpp", writeMain); err != nil {
		return err
	}
	return write("Makefile", func(w *bufio.Writer) { writeMakefile(w, units) })
}
