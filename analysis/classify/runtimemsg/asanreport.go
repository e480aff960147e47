package runtimemsg

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// AddressSanitizer builds its report of a failed check as an ErrorGeneric
// (compiler-rt asan_errors.h) in the frames of its report path before it
// aborts: the bad address's description (AddressDescription: its kind and
// the address), then
//
//	uptr pc, bp, sp; uptr access_size; const char *bug_descr; bool is_write; u8 shadow_val;
//
// bug_descr is ASan's name for the bug ("heap-use-after-free"), chosen from
// shadow_val, the shadow byte of the bad address ((addr >> 3) + 0x7fff8000
// on x86-64). ASan keeps its shadow memory out of cores
// (use_madv_dontdump=1), so the shadow byte is read from the shadow itself
// when the core has it, else from the report. gcc's libasan and clang's
// runtime lay it out alike.

// asanShadowOffset is ASan's shadow offset on x86-64 Linux
// (asan_mapping.h kDefaultShadowOffset64).
const asanShadowOffset = 0x7fff8000

// asanBugTypes are the bug_descr strings of ErrorGeneric by shadow byte
// (asan_errors.cpp ErrorGeneric::ErrorGeneric), and what each byte means
// (ASan's shadow legend).
var asanBugTypes = map[byte]struct{ bug, meaning string }{
	0xfa: {"heap-buffer-overflow", "a heap redzone"},
	0xac: {"heap-buffer-overflow", "an array cookie"},
	0xfd: {"heap-use-after-free", "freed heap memory"},
	0xf1: {"stack-buffer-underflow", "a stack left redzone"},
	0xf2: {"stack-buffer-overflow", "a stack mid redzone"},
	0xf3: {"stack-buffer-overflow", "a stack right redzone"},
	0xf5: {"stack-use-after-return", "the stack of a returned function"},
	0xf8: {"stack-use-after-scope", "a local out of scope"},
	0xf9: {"global-buffer-overflow", "a global redzone"},
	0xf6: {"initialization-order-fiasco", "a global not yet initialised"},
	0xf7: {"use-after-poison", "memory the program poisoned"},
	0xfc: {"container-overflow", "a container's unused capacity"},
	0xbb: {"intra-object-overflow", "an intra-object redzone"},
	0xca: {"dynamic-stack-buffer-overflow", "an alloca left redzone"},
	0xcb: {"dynamic-stack-buffer-overflow", "an alloca right redzone"},
}

// asanBugNames is the set of bug_descr strings.
var asanBugNames = func() map[string]bool {
	m := map[string]bool{"unknown-crash": true}
	for _, b := range asanBugTypes {
		m[b.bug] = true
	}
	return m
}()

// asanReport is the ErrorGeneric found in memory.
type asanReport struct {
	bug         string
	shadow      byte
	shadowFrom  string // "the shadow memory" or "ASan's report"
	pc          uint64
	accessSize  uint64
	write       bool
	addr        uint64
	hasAddr     bool
	addressKind string // "heap", "stack", "global"
}

// asanScan bounds the stack memory searched for ASan's report.
const asanScan = 64 << 10

// asanReportInMemory finds ASan's ErrorGeneric in the crashing thread's
// stack: a word pointing at one of the bug_descr strings, with a plausible
// access size before it.
func (a *Reader) asanReportInMemory() (asanReport, bool) {
	if a.p == nil || len(a.frames) == 0 || a.frames[0].Regs == nil || !a.x86() {
		return asanReport{}, false
	}
	rsp := a.frames[0].Regs["rsp"]
	buf := make([]byte, asanScan)
	n := a.readAvailable(rsp, buf)
	for off := 40; off+16 <= n; off += 8 {
		p := Le64(buf[off:])
		if p < NullLimit {
			continue
		}
		name, ok := a.readCString(p, 40)
		if !ok || !asanBugNames[name] {
			continue
		}
		size := Le64(buf[off-8:])
		if size == 0 || size > 1<<20 {
			continue
		}
		r := asanReport{bug: name, accessSize: size, pc: Le64(buf[off-32:]), write: buf[off+8] != 0,
			shadow: buf[off+9], shadowFrom: "ASan's report"}
		a.asanAddress(&r, buf[:n], off)
		return r, true
	}
	return asanReport{}, false
}

// readAvailable reads as much of [addr, addr+len(buf)) as the core holds
// from addr on, in pages; it returns how many bytes it read.
func (a *Reader) readAvailable(addr uint64, buf []byte) int {
	n := 0
	for n < len(buf) {
		end := min(len(buf), n+4096-int((addr+uint64(n))%4096))
		k, _ := a.p.ReadMemory(addr+uint64(n), buf[n:end])
		n += k
		if n < end {
			break
		}
	}
	return n
}

// asanAddressKinds are AddressDescription's kinds (asan_descriptions.h
// AddressKind: wild 0, shadow 1, heap 2, stack 3, global 4).
var asanAddressKinds = map[uint32]string{2: "heap", 3: "stack", 4: "global"}

// asanAddress finds the bad address in the AddressDescription before the
// report's pc: its kind, then the address, checked against what follows
// it for that kind (a heap chunk access repeats the address four words
// on; a global's description is followed by the global's extent).
func (a *Reader) asanAddress(r *asanReport, buf []byte, bugOff int) {
	for off := bugOff - 40; off >= 8 && off >= bugOff-8*160; off -= 8 {
		kind, ok := asanAddressKinds[uint32(Le64(buf[off-8:]))]
		if !ok {
			continue
		}
		addr := Le64(buf[off:])
		if addr < NullLimit || !Canonical(addr) || off+48 > len(buf) {
			continue
		}
		switch kind {
		case "heap":
			ok = Le64(buf[off+32:]) == addr
		case "global":
			beg, withRedzone := Le64(buf[off+8:]), Le64(buf[off+32:])
			ok = beg <= addr && addr < beg+withRedzone
		case "stack":
			ok = Le64(buf[off+16:]) < 1<<20 // the offset in its frame
		}
		if ok {
			r.addr, r.hasAddr, r.addressKind = addr, true, kind
			if b, ok := a.shadowByte(addr); ok {
				r.shadow, r.shadowFrom = b, "the shadow memory"
			}
			return
		}
	}
}

// shadowByte reads ASan's shadow byte of addr from the core; a partially
// addressable granule (1-7) is followed by the next one, as ASan does.
func (a *Reader) shadowByte(addr uint64) (byte, bool) {
	var b [2]byte
	if n, _ := a.p.ReadMemory(addr>>3+asanShadowOffset, b[:]); n < 2 || b[0] == 0 {
		return 0, false
	}
	if b[0] < 8 {
		return b[1], true
	}
	return b[0], true
}

// asanFromMemory classifies the bug ASan's report in memory names.
func (a *Reader) asanFromMemory(r asanReport, access string, size int, check bool) {
	sr := &model.SanitizerReport{Tool: "AddressSanitizer", Bug: r.bug}
	a.cls.Kind = sanitizerBugKind(sr)
	at := ""
	if r.hasAddr {
		at = fmt.Sprintf(" on address %#x (%s memory)", r.addr, r.addressKind)
	}
	legend := ""
	if t, ok := asanBugTypes[r.shadow]; ok {
		legend = ": " + t.meaning
	}
	a.evidence("AddressSanitizer's report, still in its frames' stack memory: %s%s at pc %#x, %s %d-byte %s; shadow byte %#02x (from %s)%s",
		r.bug, at, r.pc, article(int(r.accessSize)), r.accessSize, rw(r.write), r.shadow, r.shadowFrom, legend)
	if !check {
		access, size = rw(r.write), int(r.accessSize)
	}
	a.cls.Summary = fmt.Sprintf("AddressSanitizer: %s — %s %d-byte %s in %s%s. %s",
		r.bug, article(size), size, access, a.where(), at, asanReportHas[r.addressKind])
}

// asanReportHas says what ASan's report on stderr adds for each kind of
// address.
var asanReportHas = map[string]string{
	"heap":   "Its report on stderr has the stacks that allocated and freed the memory.",
	"stack":  "Its report on stderr names the local variable and its frame.",
	"global": "Its report on stderr names the global and its size.",
	"":       "Its report on stderr has the details.",
}

// article is "an" before a number said with a vowel sound (8, 11, 18,
// 80...), else "a".
func article(n int) string {
	s := fmt.Sprint(n)
	if s[0] == '8' || s == "11" || s == "18" {
		return "an"
	}
	return "a"
}

func rw(write bool) string {
	if write {
		return "write"
	}
	return "read"
}
