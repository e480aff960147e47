// Command gpu benchmarks faultline's cubin line tables against nvdisasm:
// the inline chain of every instruction address of a cubin, in process,
// against `nvdisasm -ndf -c -gi` on the same cubin (which prints the same
// chains as annotations). It prints both times and their ratio.
//
//	go run ./bench/gpu [-runs N] [-nvdisasm PATH] CUBIN...
//
// bench/gpu/run.sh builds a large cubin with CUDA 11.8 and runs this.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/logs"
)

func main() {
	runs := flag.Int("runs", 5, "timed runs of each side (the median is reported)")
	nvdisasm := flag.String("nvdisasm", "nvdisasm", "nvdisasm to compare with")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gpu [-runs N] [-nvdisasm PATH] CUBIN...")
		os.Exit(2)
	}
	for _, path := range flag.Args() {
		if err := bench(path, *runs, *nvdisasm); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

// instructionSize is 16 bytes from Volta (sm_70) on, 8 before.
func instructionSize(arch string) uint64 {
	var sm int
	fmt.Sscanf(arch, "sm_%d", &sm)
	if sm >= 70 {
		return 16
	}
	return 8
}

// chainsForAll opens the cubin and resolves every instruction address.
func chainsForAll(path string) (addrs, levels int, err error) {
	c, err := cuda.OpenCubin(path)
	if err != nil {
		return 0, 0, err
	}
	step := instructionSize(c.Arch())
	sections := map[string]uint64{}
	for _, f := range c.Functions() {
		sections[f.Section] = max(sections[f.Section], f.Offset+f.Size)
	}
	for sec, size := range sections {
		for off := uint64(0); off < size; off += step {
			loc, err := c.Resolve(fmt.Sprintf("%s+%#x", sec, off))
			if err != nil {
				return 0, 0, err
			}
			addrs++
			levels += len(loc.Frames)
		}
	}
	return addrs, levels, nil
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func bench(path string, runs int, nvdisasm string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	var ours []time.Duration
	var addrs, levels int
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		addrs, levels, err = chainsForAll(path)
		if err != nil {
			return err
		}
		ours = append(ours, time.Since(t0))
	}
	fmt.Printf("%s (%d KiB): %d instruction addresses, %d inline levels\n", path, st.Size()>>10, addrs, levels)
	fmt.Printf("  faultline (all chains, in process): %v\n", median(ours))
	if _, err := exec.LookPath(nvdisasm); err != nil {
		fmt.Printf("  nvdisasm: not found (%v); source the CUDA env to compare\n", err)
		return nil
	}
	var theirs []time.Duration
	for i := 0; i < runs; i++ {
		cmd := exec.Command(nvdisasm, "-ndf", "-c", "-gi", path)
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("nvdisasm: %v", err)
		}
		theirs = append(theirs, time.Since(t0))
	}
	m, n := median(ours), median(theirs)
	fmt.Printf("  nvdisasm -ndf -c -gi:                %v\n", n)
	fmt.Printf("  ratio: faultline is %.1fx faster (target >= 10x)\n", float64(n)/float64(m))
	return agreement(path, nvdisasm)
}

// agreement compares the chains with nvdisasm's annotations: the whole
// chain where nvdisasm printed a block, the innermost line elsewhere.
func agreement(path, nvdisasm string) error {
	out, err := exec.Command(nvdisasm, "-ndf", "-c", "-gi", path).Output()
	if err != nil {
		return err
	}
	l, err := logs.ParseNvdisasm(bytes.NewReader(out))
	if err != nil {
		return err
	}
	c, err := cuda.OpenCubin(path)
	if err != nil {
		return err
	}
	same, differ := 0, 0
	for _, sec := range l.Sections {
		for _, in := range sec.Instructions {
			loc, err := c.Resolve(fmt.Sprintf("%s+%#x", sec.Name, in.Address))
			if err != nil {
				return err
			}
			want := in.Chain
			if !in.Annotated && len(want) > 1 {
				want = want[:1]
			}
			ok := len(loc.Frames) >= len(want) && (in.Annotated == (len(loc.Frames) == len(want)) || !in.Annotated)
			for i := 0; ok && i < len(want); i++ {
				ok = loc.Frames[i].File == want[i].File && loc.Frames[i].Line == want[i].Line
			}
			if ok {
				same++
			} else {
				differ++
			}
		}
	}
	fmt.Printf("  agreement with nvdisasm: %d instructions agree, %d differ\n", same, differ)
	return nil
}
