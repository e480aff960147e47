package op_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/unwind/op"
)

var update = flag.Bool("update", false, "rewrite testdata/eval.golden")

// goldenContext knows registers 0..31 (register n holds 0x1000*(n+1)) and
// memory from 0x1000 up (each address reads back as its complement, cut to
// the size read); reads below 0x1000 fail.
type goldenContext struct{}

func (goldenContext) Reg(n uint64) (uint64, bool) { return 0x1000 * (n + 1), n < 32 }
func (goldenContext) ReadMemory(addr uint64, size int) (uint64, error) {
	if addr < 0x1000 {
		return 0, fmt.Errorf("unmapped address %#x", addr)
	}
	v := ^addr
	if size < 8 {
		v &= 1<<(8*size) - 1
	}
	return v, nil
}

// evalCase is one evaluation: the expression (hex), address size, byte
// order and initial stack.
type evalCase struct {
	name    string
	hex     string
	ptrSize int
	big     bool
	initial []uint64
}

// handCases exercise every operation op knows and every way evaluation
// fails.
var handCases = []evalCase{
	{name: "lit0 lit31", hex: "304f"},
	{name: "addr", hex: "031122334455667788"},
	{name: "addr 4-byte", hex: "0311223344", ptrSize: 4},
	{name: "addr big-endian", hex: "031122334455667788", big: true},
	{name: "const1u const1s", hex: "08ff09ff"},
	{name: "const2u const2s", hex: "0affff0bffff"},
	{name: "const2u big-endian", hex: "0a0102", big: true},
	{name: "const4u const4s", hex: "0cffffffff0dffffffff"},
	{name: "const8u", hex: "0e0102030405060708"},
	{name: "const8s", hex: "0fffffffffffffffff"},
	{name: "constu consts", hex: "10e58e26117f"},
	{name: "breg7 +8", hex: "7708"},
	{name: "breg31 -1", hex: "8f7f"},
	{name: "bregx 16 +0", hex: "921000"},
	{name: "bregx unknown", hex: "922800"},
	{name: "bregx truncated", hex: "9210"},
	{name: "reg5", hex: "55"},
	{name: "reg31", hex: "6f"},
	{name: "regx 3", hex: "9003"},
	{name: "regx unknown", hex: "9028"},
	{name: "regx truncated", hex: "9080"},
	{name: "reg not alone", hex: "5530"},
	{name: "reg after literal", hex: "3055"},
	{name: "dup", hex: "3512"},
	{name: "dup empty", hex: "12"},
	{name: "drop", hex: "313213"},
	{name: "drop empty", hex: "13"},
	{name: "over", hex: "313214"},
	{name: "over short", hex: "3114"},
	{name: "pick 2", hex: "3132331502"},
	{name: "pick beyond", hex: "311505"},
	{name: "pick truncated", hex: "3115"},
	{name: "swap", hex: "313216"},
	{name: "swap short", hex: "3116"},
	{name: "rot", hex: "31323317"},
	{name: "rot short", hex: "313217"},
	{name: "deref", hex: "0a002006"},
	{name: "deref 4-byte", hex: "0a002006", ptrSize: 4},
	{name: "deref unmapped", hex: "3006"},
	{name: "deref empty", hex: "06"},
	{name: "deref_size 1", hex: "0a00209401"},
	{name: "deref_size 2 big-endian", hex: "0a20009402", big: true},
	{name: "deref_size 0", hex: "0a00209400"},
	{name: "deref_size 9", hex: "0a00209409"},
	{name: "deref_size 8 on 4-byte", hex: "0a00209408", ptrSize: 4},
	{name: "deref_size truncated", hex: "0a002094"},
	{name: "deref_size empty", hex: "9404"},
	{name: "abs", hex: "117b19"},
	{name: "abs positive", hex: "3519"},
	{name: "neg", hex: "351f"},
	{name: "not", hex: "3520"},
	{name: "not 4-byte", hex: "3520", ptrSize: 4},
	{name: "unary empty", hex: "19"},
	{name: "plus_uconst", hex: "30237f"},
	{name: "plus_uconst big", hex: "3023ffffffffffffffffff01"},
	{name: "plus_uconst empty", hex: "2308"},
	{name: "plus_uconst truncated", hex: "3023"},
	{name: "and or xor", hex: "3f351a3a213327"},
	{name: "plus minus mul", hex: "3a35223b1c341e"},
	{name: "div", hex: "117b3a1b"},
	{name: "div by -1", hex: "0e0000000000000080117f1b"},
	{name: "div by zero", hex: "35301b"},
	{name: "mod", hex: "3b341d"},
	{name: "mod by zero", hex: "35301d"},
	{name: "shl shr", hex: "3134243225"},
	{name: "shl 64", hex: "31084024"},
	{name: "shr 64", hex: "117f084025"},
	{name: "shra", hex: "117f3226"},
	{name: "shra 64", hex: "117f084026"},
	{name: "comparisons", hex: "3132293132 2a3132 2b3132 2c3132 2d3132 2e"},
	{name: "signed comparisons", hex: "117f302d117f302b"},
	{name: "binary short", hex: "3122"},
	{name: "skip", hex: "2f01003334"},
	{name: "skip back out", hex: "2ff0ff"},
	{name: "skip past end", hex: "2f1000"},
	{name: "skip truncated", hex: "2f01"},
	{name: "bra taken", hex: "31280100303f"},
	{name: "bra not taken", hex: "302801003f31"},
	{name: "bra empty", hex: "280000"},
	{name: "loop forever", hex: "2ffdff"},
	{name: "counted loop", hex: "3a31 1c 12 28 faff"},
	{name: "nop", hex: "963596"},
	{name: "stack_value", hex: "35 9f"},
	{name: "unsupported", hex: "3091"},
	{name: "unsupported first", hex: "e0"},
	{name: "empty", hex: ""},
	{name: "empty stack at end", hex: "3013"},
	{name: "stack too deep", hex: strings.Repeat("30", 1025)},
	{name: "stack at limit", hex: strings.Repeat("30", 1024)},
	{name: "cfa pushed", hex: "2308", initial: []uint64{0x7ffc0000}},
	{name: "cfa deref", hex: "06", initial: []uint64{0x7ffc0000}},
	{name: "initial too deep", hex: "", initial: make([]uint64, 1025)},
	{name: "address size 2", hex: "30", ptrSize: 2},
	{name: "4-byte wrap", hex: "0cffffffff3122", ptrSize: 4},
	{name: "4-byte mask of initial", hex: "96", ptrSize: 4, initial: []uint64{0x1_0000_0001}},
	{name: "glibc PLT", hex: "770880003f1a3b2a332422"},
	{name: "glibc __restore_rt CFA", hex: "77a00106"},
}

// randomCases are expressions of op's operations with operands of the
// right size (some cut short), fixed by the seed.
func randomCases() []evalCase {
	ops := []byte{0x03, 0x06, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x10, 0x11, 0x12, 0x13, 0x14,
		0x15, 0x16, 0x17, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25,
		0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x3f, 0x4f, 0x50, 0x57,
		0x70, 0x77, 0x90, 0x92, 0x94, 0x96, 0x9f, 0xe0}
	r := rand.New(rand.NewPCG(13, 80))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = []byte{0x00, 0x01, 0x08, 0x7f, 0x80, 0xff}[r.IntN(6)]
		}
		return b
	}
	var out []evalCase
	for i := range 300 {
		ptr := []int{4, 8}[r.IntN(2)]
		var b []byte
		for range r.IntN(4) {
			b = append(b, 0x30+byte(r.IntN(32))) // literals, so that most operations have operands
		}
		for range 1 + r.IntN(8) {
			code := ops[r.IntN(len(ops))]
			b = append(b, code)
			switch code {
			case 0x03:
				b = append(b, randBytes(ptr)...)
			case 0x08, 0x09:
				b = append(b, randBytes(1)...)
			case 0x0a, 0x0b:
				b = append(b, randBytes(2)...)
			case 0x0c, 0x0d:
				b = append(b, randBytes(4)...)
			case 0x0e:
				b = append(b, randBytes(8)...)
			case 0x10, 0x11, 0x23, 0x70, 0x77, 0x90:
				b = append(b, byte(r.IntN(0x80)))
			case 0x92:
				b = append(b, byte(r.IntN(40)), byte(r.IntN(0x80)))
			case 0x94:
				b = append(b, byte(r.IntN(10)))
			case 0x15:
				b = append(b, byte(r.IntN(5)))
			case 0x28, 0x2f:
				b = append(b, byte(r.IntN(9)-4), []byte{0, 0xff}[r.IntN(2)])
			}
		}
		if r.IntN(10) == 0 {
			b = b[:r.IntN(len(b))]
		}
		c := evalCase{name: fmt.Sprintf("random %d", i), hex: hex.EncodeToString(b), ptrSize: ptr, big: r.IntN(4) == 0}
		if r.IntN(2) == 0 {
			c.initial = []uint64{0x2000 + uint64(r.IntN(0x1000))}
		}
		out = append(out, c)
	}
	return out
}

// evalLine evaluates one case with goldenContext and prints the result.
func evalLine(c evalCase) (string, error) {
	expr, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
	if err != nil {
		return "", fmt.Errorf("%s: %v", c.name, err)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if c.big {
		order = binary.BigEndian
	}
	ptr := c.ptrSize
	if ptr == 0 {
		ptr = 8
	}
	v, isReg, err := op.Eval(expr, order, ptr, goldenContext{}, c.initial...)
	res := fmt.Sprintf("%#x reg=%v", v, isReg)
	if err != nil {
		var oe *op.Error
		if !errors.As(err, &oe) {
			return "", fmt.Errorf("%s: error %v is not an *op.Error", c.name, err)
		}
		res = fmt.Sprintf("%s (wrapped: %v)", err, oe.Err != nil)
	}
	hexs := strings.ReplaceAll(c.hex, " ", "")
	if len(hexs) > 48 {
		hexs = fmt.Sprintf("%s...(%d bytes)", hexs[:48], len(expr))
	}
	return fmt.Sprintf("%s | %s ptr=%d big=%v initial=%d | %s", c.name, hexs, ptr, c.big, len(c.initial), res), nil
}

// TestEvalGolden holds Eval's result for every hand case, every corpus
// expression and the random ones to testdata/eval.golden, byte for byte: a
// restructuring of the evaluator must not change one value or message.
func TestEvalGolden(t *testing.T) {
	cases := append([]evalCase{}, handCases...)
	for i, e := range corpusExprs(t) {
		c := evalCase{name: fmt.Sprintf("corpus %d", i), hex: hex.EncodeToString(e.expr), ptrSize: e.ptrSize}
		if e.cfa {
			c.initial = []uint64{corpusCFA}
		}
		cases = append(cases, c)
	}
	cases = append(cases, randomCases()...)
	var b strings.Builder
	for _, c := range cases {
		line, err := evalLine(c)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	const path = "testdata/eval.golden"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(b.String(), "\n")
	bad := 0
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			if bad++; bad > 10 {
				t.Fatal("more than 10 lines differ")
			}
			g := "<none>"
			if i < len(got) {
				g = got[i]
			}
			t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
	if len(got) != len(strings.Split(string(want), "\n")) {
		t.Errorf("%d lines, want %d", len(got), len(strings.Split(string(want), "\n")))
	}
}
