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
)

// TestAgainstObjdump32 compiles code for i386 (gcc -m32) and checks every
// instruction DecodeX86_32 prints against objdump's text, and that every
// memory operand objdump prints is the one decoded: 32-bit mode has no
// REX prefix (0x40-0x4f are inc and dec) and no rip-relative addressing.
func TestAgainstObjdump32(t *testing.T) {
	for _, tool := range []string{"gcc", "objdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte(`
struct S { int a, b, c[8]; };
int get(struct S *s, int i) { return s->c[i] + s->b; }
void put(struct S *s, int v) { s->a = v; }
__thread int tls;
int gettls(void) { return tls; }
int counter;
void bump(int *p) { (*p)++; counter--; }
int frame(int x) { volatile int big[64]; big[3] = x; return big[3] + big[60]; }
void store0(int v) { *(volatile int *)0 = v; }
`), 0o644)
	obj := filepath.Join(dir, "m.o")
	if out, err := exec.Command("gcc", "-m32", "-O1", "-fno-pic", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc -m32 (gcc-12-multilib): %v\n%s", err, out)
	}
	out, err := exec.Command("objdump", "-d", "-r", obj).Output()
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\s+([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(\S.*)$`)
	memRe := regexp.MustCompile(`(%[a-z]s:)?-?(0x[0-9a-f]+)?\(%[a-z0-9]+(,%[a-z0-9]+,\d)?\)`)
	regs := map[string]uint64{"eax": 0x1000, "ecx": 2, "edx": 0x2000, "esp": 0xffff0000, "ebp": 0xffff0100}
	checked, memChecked := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || strings.Contains(m[3], "<") {
			continue // branches name their targets by symbol; compared elsewhere
		}
		code, _ := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[2]), " ", ""))
		got, err := DecodeX86_32(code, 0x1000, regs, nil)
		if err != nil {
			t.Fatalf("%s: %v", m[3], err)
		}
		if len(got.Bytes) != len(code) {
			t.Errorf("%q: decoded %d bytes, objdump %d", m[3], len(got.Bytes), len(code))
		}
		if want := strings.Join(strings.Fields(m[3]), " "); got.Text != want {
			t.Errorf("%x: %q, objdump says %q", code, got.Text, want)
		}
		checked++
		if want := memRe.FindString(m[3]); want != "" && !regexp.MustCompile(`\blea\b`).MatchString(m[3]) {
			if got.Mem != want {
				t.Errorf("%q: memory operand %q, objdump says %q", m[3], got.Mem, want)
			}
			memChecked++
		}
	}
	if checked < 20 || memChecked < 6 {
		t.Fatalf("only %d instructions (%d memory operands) checked:\n%s", checked, memChecked, out)
	}
}

func TestEffectiveAddress32(t *testing.T) {
	cases := []struct {
		hex    string
		regs   map[string]uint64
		text   string
		ea     uint64
		access string
	}{
		// mov 0x4(%eax),%eax: a NULL node's next field
		{"8b4004", map[string]uint64{"eax": 0}, "mov 0x4(%eax),%eax", 4, "read"},
		// mov %eax,0x0: an absolute store to 0 (x86asm prints the operand empty)
		{"a300000000", map[string]uint64{"eax": 10}, "mov %eax,0x0", 0, "write"},
		// mov %edx,-0x4(%ebp): wraps at 4 GiB, not at 2^64
		{"8955fc", map[string]uint64{"ebp": 2}, "mov %edx,-0x4(%ebp)", 0xfffffffe, "write"},
		// mov 0x8(%ecx,%edx,4),%eax
		{"8b449108", map[string]uint64{"ecx": 0x100, "edx": 2}, "mov 0x8(%ecx,%edx,4),%eax", 0x110, "read"},
		// incl (%eax): 0xff /0, not a REX prefix
		{"ff00", map[string]uint64{"eax": 0x20}, "incl (%eax)", 0x20, "write"},
	}
	for _, c := range cases {
		code, _ := hex.DecodeString(c.hex)
		got, err := DecodeX86_32(code, 0x1000, c.regs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != c.text || !got.HasAddress || got.EffectiveAddress != c.ea || got.Access != c.access {
			t.Errorf("%s: got %q ea=%#x(%v) %s, want %q ea=%#x %s", c.hex, got.Text, got.EffectiveAddress,
				got.HasAddress, got.Access, c.text, c.ea, c.access)
		}
	}
	// 0x40 is inc %eax in 32-bit mode, a REX prefix in 64-bit mode.
	if got, _ := DecodeX86_32([]byte{0x40, 0x90}, 0x1000, nil, nil); got.Text != "inc %eax" {
		t.Errorf("0x40: %q", got.Text)
	}
	// push on an exhausted stack writes 4 bytes below esp.
	got, _ := DecodeX86_32([]byte{0x55}, 0x1000, map[string]uint64{"esp": 0x2}, nil)
	if got.EffectiveAddress != 0xfffffffe || got.Access != "write" || got.Mem != "(%esp)" {
		t.Errorf("push: %+v", got)
	}
}
