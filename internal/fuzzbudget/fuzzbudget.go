// Package fuzzbudget is the resource oracle of faultline's fuzz targets: a
// fuzz input that makes a parser allocate more than a budget (a base plus
// a multiple of the input's size) or run longer than a time budget fails,
// like one that panics. Amplification — a small input costing unbounded
// memory or time — is the failure a panic-only oracle misses.
package fuzzbudget

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Budget is what one fuzz input may cost.
type Budget struct {
	Alloc   uint64        // bytes allocated for any input
	PerByte uint64        // plus this many per input byte
	Time    time.Duration // wall time of one call
}

// Default is the budget of the parsers of untrusted bytes: 64 MiB plus
// 64 bytes per input byte, 5 s (generous for a loaded CI machine; inputs are
// small). Past four times the time budget the process is stopped with a
// panic, so a hang is reported as a crasher instead of stalling the run.
var Default = Budget{Alloc: 64 << 20, PerByte: 64, Time: 5 * time.Second}

// Check runs fn, the parse of an input of size bytes, under b and fails t
// when it went over (runtime.MemStats TotalAlloc delta; wall time).
func Check(t testing.TB, size int, b Budget, fn func()) {
	t.Helper()
	if err := check(size, b, fn); err != nil {
		t.Fatal(err)
	}
}

func check(size int, b Budget, fn func()) error {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	hang := time.AfterFunc(4*b.Time, func() {
		panic(fmt.Sprintf("fuzzbudget: a %d-byte input still running after %v", size, 4*b.Time))
	})
	start := time.Now()
	fn()
	took := time.Since(start)
	hang.Stop()
	runtime.ReadMemStats(&after)
	limit := b.Alloc + b.PerByte*uint64(size)
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		return fmt.Errorf("a %d-byte input allocated %d bytes; the budget is %d", size, got, limit)
	}
	if took > b.Time {
		return fmt.Errorf("a %d-byte input took %v; the budget is %v", size, took, b.Time)
	}
	return nil
}
