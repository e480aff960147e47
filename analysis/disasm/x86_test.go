package disasm

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// TestAgainstObjdump compiles memory-accessing code with gcc, lists it with
// objdump and checks that every memory operand objdump prints is the one we
// decode, and that effective addresses follow from the registers.
func TestAgainstObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Fatal("objdump (binutils) is required")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte(`
struct S { long a, b, c[8]; };
long get(struct S *s, long i) { return s->c[i] + s->b; }
void put(struct S *s, long v) { s->a = v; }
__thread long tls;
long gettls(void) { return tls; }
static long global;
long getglobal(void) { return global; }
long frame(long x) { volatile long big[64]; big[3] = x; return big[3] + big[60]; }
`), 0o644)
	obj := filepath.Join(dir, "m.o")
	if out, err := exec.Command("gcc", "-O0", "-fPIC", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn=false", obj).Output()
	if err != nil {
		out, err = exec.Command("objdump", "-d", obj).Output()
		if err != nil {
			t.Fatal(err)
		}
	}
	line := regexp.MustCompile(`^\s+([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(\S.*)$`)
	memRe := regexp.MustCompile(`(%[a-z]s:)?-?(0x[0-9a-f]+)?\(%[a-z0-9]+(,%[a-z0-9]+,\d)?\)`)
	regs := map[string]uint64{"rax": 0x1000, "rdi": 0x2000, "rsi": 3, "rip": 0, "fs_base": 0x7f0000000000}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		code, _ := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[2]), " ", ""))
		want := memRe.FindString(m[3])
		if want == "" || regexp.MustCompile(`\b(lea|nop[wl]?)\b`).MatchString(m[3]) {
			continue
		}
		got, err := DecodeX86_64(code, 0x400000, regs, nil)
		if err != nil {
			t.Fatalf("%s: %v", m[3], err)
		}
		if got.Mem != want {
			t.Errorf("%q: memory operand %q, objdump says %q", m[3], got.Mem, want)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d memory instructions checked:\n%s", checked, out)
	}
}

func TestEffectiveAddress(t *testing.T) {
	cases := []struct {
		hex    string
		regs   map[string]uint64
		text   string
		ea     uint64
		access string
	}{
		// mov 0x8(%rax),%rdx
		{"488b5008", map[string]uint64{"rax": 0}, "mov 0x8(%rax),%rdx", 8, "read"},
		// mov %rsi,(%rdi)
		{"488937", map[string]uint64{"rdi": 0xdead000000000010}, "mov %rsi,(%rdi)", 0xdead000000000010, "write"},
		// mov 0x10(%rdi,%rsi,8),%rax
		{"488b44f710", map[string]uint64{"rdi": 0x1000, "rsi": 2}, "mov 0x10(%rdi,%rsi,8),%rax", 0x1020, "read"},
		// mov (%eax),%ecx  (32-bit address size: only the low half of rax counts)
		{"678b08", map[string]uint64{"rax": 0xffffffff00000010}, "mov (%eax),%ecx", 0x10, "read"},
		// mov %edi,-0xf4(%rbp): disp32 is signed
		{"89bd0cffffff", map[string]uint64{"rbp": 0x7fff14df4030}, "mov %edi,-0xf4(%rbp)", 0x7fff14df3f3c, "write"},
		// cmpl $0x0,0x4(%rbx)
		{"837b0400", map[string]uint64{"rbx": 0x100}, "cmpl $0x0,0x4(%rbx)", 0x104, "read"},
	}
	for _, c := range cases {
		code, _ := hex.DecodeString(c.hex)
		got, err := DecodeX86_64(code, 0x1000, c.regs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != c.text || !got.HasAddress || got.EffectiveAddress != c.ea || got.Access != c.access {
			t.Errorf("%s: got %q ea=%#x(%v) %s, want %q ea=%#x %s", c.hex, got.Text, got.EffectiveAddress,
				got.HasAddress, got.Access, c.text, c.ea, c.access)
		}
	}
	// push on an exhausted stack writes below rsp.
	got, _ := DecodeX86_64([]byte{0x55}, 0x1000, map[string]uint64{"rsp": 0x7ffc0000}, nil)
	if got.EffectiveAddress != 0x7ffc0000-8 || got.Access != "write" {
		t.Errorf("push: %+v", got)
	}
	// Unknown register: no address claimed.
	got, _ = DecodeX86_64([]byte{0x48, 0x8b, 0x50, 0x08}, 0x1000, map[string]uint64{}, nil)
	if got.HasAddress {
		t.Errorf("claimed an address without rax: %+v", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x48, 0x8b, 0x50, 0x08})
	f.Add([]byte{0x67, 0x8b, 0x08})
	f.Add([]byte{0x0f, 0x0b})
	f.Fuzz(func(t *testing.T, code []byte) {
		fuzzbudget.Check(t, len(code), fuzzbudget.Default, func() {
			DecodeX86_64(code, 0x1000, map[string]uint64{"rax": 1, "rsp": 2}, nil)
			Window(code, 0x1000, 0x1004, 8, nil)
			if len(code) <= 64 {
				CallArguments(code, 0x1000+uint64(len(code)))
			}
		})
	})
}

// TestCallArguments: the constants set up for a call are found from its
// return address: the string literals and the line number libstdc++'s
// __glibcxx_assert_fail gets (gcc 12's code for a failed
// _GLIBCXX_ASSERTIONS check, from objdump).
func TestCallArguments(t *testing.T) {
	// 1399: sub $0x8,%rsp; lea 0xc60(%rip),%rcx; lea 0xc6d(%rip),%rdx;
	// mov $0x476,%esi; lea 0xd31(%rip),%rdi; call 1030
	code := []byte{0x48, 0x83, 0xec, 0x08, 0x48, 0x8d, 0x0d, 0x60, 0x0c, 0x00, 0x00, 0x48, 0x8d, 0x15, 0x6d, 0x0c, 0x00, 0x00,
		0xbe, 0x76, 0x04, 0x00, 0x00, 0x48, 0x8d, 0x3d, 0x31, 0x0d, 0x00, 0x00, 0xe8, 0x74, 0xfc, 0xff, 0xff}
	end := uint64(0x1399 + len(code))
	got := CallArguments(append([]byte{0x90, 0x0f}, code...), end)
	want := map[string]uint64{"rcx": 0x2004, "rdx": 0x2018, "rsi": 0x476, "rdi": 0x20e8}
	for r, v := range want {
		if got[r] != v {
			t.Errorf("%s = %#x, want %#x (all: %x)", r, got[r], v, got)
		}
	}
	if CallArguments(code[:len(code)-1], end-1) != nil {
		t.Error("a sequence that does not end in a call gave arguments")
	}
}
