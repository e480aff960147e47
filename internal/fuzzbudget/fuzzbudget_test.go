package fuzzbudget

import (
	"strings"
	"testing"
	"time"
)

var sink []byte

func TestCheck(t *testing.T) {
	b := Budget{Alloc: 1 << 20, PerByte: 16, Time: 200 * time.Millisecond}
	if err := check(1000, b, func() { sink = make([]byte, 512<<10) }); err != nil {
		t.Errorf("within budget: %v", err)
	}
	err := check(1000, b, func() { sink = make([]byte, 8<<20) })
	if err == nil || !strings.Contains(err.Error(), "allocated") {
		t.Errorf("8 MiB for a 1000-byte input under a 1 MiB budget: %v", err)
	}
	err = check(10, b, func() { time.Sleep(300 * time.Millisecond) })
	if err == nil || !strings.Contains(err.Error(), "took") {
		t.Errorf("300 ms under a 200 ms budget: %v", err)
	}
}
