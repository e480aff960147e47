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
	if *units <= crashUnit {
		log.Fatalf("gen: -units must be > %d", crashUnit)
	}
	if err := os.MkdirAll(filepath.Join(*out, "src"), 0o755); err != nil {
		log.Fatal(err)
	}
	write := func(name string, body func(w *bufio.Writer)) {
		f, err := os.Create(filepath.Join(*out, name))
		if err != nil {
			log.Fatal(err)
		}
		w := bufio.NewWriter(f)
		body(w)
		if err := w.Flush(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
	write("src/big.h", writeHeader)
	for u := 0; u < *units; u++ {
		u := u
		write(fmt.Sprintf("src/unit_%03d.cpp", u), func(w *bufio.Writer) { writeUnit(w, u, *types) })
	}
	write("src/park.cpp", func(w *bufio.Writer) { writePark(w, *units) })
	write("src/bigjob.cpp", writeMain)
	write("Makefile", func(w *bufio.Writer) { writeMakefile(w, *units) })
}
