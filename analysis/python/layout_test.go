package python

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayout311MatchesHeaders compiles testdata/python/src/offsets311.c
// against each installed CPython 3.11's and 3.12's headers and compares the
// offsets it prints with layout311 and layout312.
func TestLayout311MatchesHeaders(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	src, _ := filepath.Abs("../../testdata/python/src/offsets311.c")
	headers := []struct {
		dir string
		l   *layout
	}{
		{"/usr/include/python3.11", layout311(0x030b02f0)},
		{"/root/.pyenv/versions/3.11.7/include/python3.11", layout311(0x030b07f0)},
		{"/root/.pyenv/versions/3.12.1/include/python3.12", layout312(0x030c01f0)},
	}
	tested := 0
	for _, h := range headers {
		inc, l := h.dir, h.l
		if _, err := os.Stat(filepath.Join(inc, "internal", "pycore_frame.h")); err != nil {
			continue
		}
		want := map[string]uint64{
			"runtime.interpreters.head": l.runtimeInterpretersHead, "interp.next": l.interpNext,
			"interp.threads.head": l.interpThreadsHead, "tstate.next": l.tstateNext,
			"tstate.cframe": l.tstateCurrentFrame, "tstate.thread_id": l.tstateThreadID,
			"tstate.native_thread_id": l.tstateNativeThreadID, "cframe.current_frame": l.cframeCurrentFrame,
			"frame.f_code": l.frameCode, "frame.previous": l.framePrevious, "frame.prev_instr": l.frameInstr,
			"frame.owner": l.frameOwner, "frame.is_entry": l.frameIsEntry, "code.co_filename": l.codeFilename,
			"code.co_name": l.codeName, "code.co_qualname": l.codeQualname, "code.co_linetable": l.codeLinetable,
			"code.co_firstlineno": l.codeFirstLineno, "code.co_code_adaptive": l.codeCodeAdaptive,
			"bytes.ob_size": l.bytesSize, "bytes.ob_sval": l.bytesData, "unicode.length": l.unicodeLength,
			"unicode.state": l.unicodeState, "sizeof PyASCIIObject": l.asciiObjectSize,
			"sizeof PyCompactUnicodeObject": l.compactUnicodeSize,
		}
		if l.shimOwner != 0 {
			want["FRAME_OWNED_BY_CSTACK"] = uint64(l.shimOwner)
		}
		t.Run(inc, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "offsets")
			if out, err := exec.Command("gcc", "-I"+inc, "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]uint64{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				v, _ := strconv.ParseUint(f[len(f)-1], 10, 64)
				got[strings.Join(f[:len(f)-1], " ")] = v
			}
			for k, w := range want {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s: not printed by offsets311.c", k)
				} else if g != w {
					t.Errorf("%s = %d in the headers, the layout has %d", k, g, w)
				}
			}
		})
		tested++
	}
	if tested == 0 {
		t.Skip("no CPython 3.11 or 3.12 headers (apt-get install python3-dev)")
	}
}
