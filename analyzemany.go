package main

import (
	"runtime"
	"sync"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
)

// openedDump is one dump of several: its model, or why it did not open.
type openedDump struct {
	crash *analysis.Crash
	err   error
}

// openDumps opens several dumps on every core the process may use, one
// worker per core, each with a module pool: the cores of one program share
// their libraries, so each worker opens and indexes a library once, not
// once per core. Results come back in the order of dumps.
func openDumps(dumps []string, opt analysis.Options) []openedDump {
	out := make([]openedDump, len(dumps))
	workers := min(runtime.GOMAXPROCS(0), len(dumps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool := analysis.NewModulePool()
			defer pool.Close()
			o := opt
			o.Pool = pool
			for i := range next {
				out[i].crash, out[i].err = analysis.Open(dumps[i], o)
			}
		}()
	}
	for i := range dumps {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// splitOpened separates the models from the failures, both in dump order.
func splitOpened(dumps []string, opened []openedDump) ([]*analysis.Crash, []classify.Failure) {
	var crashes []*analysis.Crash
	var failed []classify.Failure
	for i, o := range opened {
		if o.err != nil {
			failed = append(failed, classify.Failure{Dump: dumps[i], Error: o.err.Error()})
			continue
		}
		crashes = append(crashes, o.crash)
	}
	return crashes, failed
}
