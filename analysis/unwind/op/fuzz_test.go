package op

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// fuzzContext has every register and memory that reads back its address.
type fuzzContext struct{}

func (fuzzContext) Reg(n uint64) (uint64, bool) { return n * 0x100, n < 64 }
func (fuzzContext) ReadMemory(addr uint64, size int) (uint64, error) {
	if addr < 0x1000 {
		return 0, errors.New("unmapped")
	}
	return addr ^ 0x55, nil
}

// FuzzEval evaluates arbitrary DWARF expressions with the CFA pushed, as
// DW_CFA_expression does: any input must end in a value or an error within
// MaxSteps.
func FuzzEval(f *testing.F) {
	f.Fuzz(func(t *testing.T, expr []byte, cfa uint64, ptr4 bool) {
		fuzzbudget.Check(t, len(expr), fuzzbudget.Default, func() {
			size := 8
			if ptr4 {
				size = 4
			}
			Eval(expr, binary.LittleEndian, size, fuzzContext{}, cfa)
		})
	})
}
