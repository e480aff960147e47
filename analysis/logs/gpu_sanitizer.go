package logs

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// SanitizerReport is what NVIDIA compute-sanitizer printed: one entry per
// error it found (memcheck, racecheck, initcheck, synccheck).
type SanitizerReport struct {
	Tool   string // "memcheck" when the log says so, else ""
	Errors []SanitizerError
	// Summary is the count of "ERROR SUMMARY: N errors", -1 when absent.
	Summary int
}

// SanitizerError is one "========= Invalid __global__ read of size 4 bytes"
// block (or one racecheck hazard).
type SanitizerError struct {
	// Message is the first line: "Invalid __global__ read of size 4 bytes",
	// "Race reported between Write access ... and Read access ...".
	Message string
	// Access is "read" or "write" and Size its size in bytes, for
	// invalid accesses; Space is the memory space ("global", "shared",
	// "local").
	Access string
	Size   int
	Space  string
	// Kernel, PC offset and location of the faulting instruction
	// ("at crash_kernel(float*)+0xd0 in /src/k.cu:30", or the older
	// "at 0xd0 in /src/k.cu:30:crash_kernel(float*)").
	Function string
	Offset   uint64
	File     string
	Line     int
	// Block and Thread are blockIdx and threadIdx of the faulting thread.
	Block, Thread [3]uint32
	HasThread     bool
	// Address is the bad address and AddressNote the sanitizer's
	// explanation ("is out of bounds", "and is 400 bytes after ...").
	Address     uint64
	AddressNote []string
	// DeviceFrames are the "Device Frame:" lines (device call stack,
	// innermost first); HostFrames the "Host Frame:" lines of the
	// launch-time host backtrace.
	DeviceFrames []SanitizerFrame
	HostFrames   []SanitizerFrame
	// Race is the second access of a racecheck hazard.
	Race *SanitizerFrame
	// LogLine is the line number of Message.
	LogLine int
}

// SanitizerFrame is one frame line.
type SanitizerFrame struct {
	Function string
	PC       uint64 // [0x...] for host frames, +0x... for device frames
	Module   string // host frames: the object ("in /usr/lib/.../libcuda.so.1")
	File     string
	Line     int
	Access   string // racecheck: "Write", "Read"
}

const sanitizerPrefix = "========="

var (
	reInvalidAccess = lazyregexp.New(`^Invalid (__\w+__|\w+) (read|write|atomic) of size (\d+)(?: bytes?)?`)
	reByThread      = lazyregexp.New(`by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)`)
	reAddress       = lazyregexp.New(`^Address (0x[0-9a-fA-F]+)(.*)$`)
	reAtNew         = lazyregexp.New(`^at (.+?)\+(0x[0-9a-fA-F]+) in (.+?):(\d+)$`)
	reAtOld         = lazyregexp.New(`^at (0x[0-9a-fA-F]+) in (.+?):(\d+):(.+)$`)
	reAtNoLine      = lazyregexp.New(`^at (.+?)\+(0x[0-9a-fA-F]+)$`)
	reHostFrame     = lazyregexp.New(`^Host Frame:\s*(.*?)\s*\[(0x[0-9a-fA-F]+)\](?:\s+in\s+(.+))?$`)
	reDeviceNew     = lazyregexp.New(`^(.+?)\+(0x[0-9a-fA-F]+)(?: in (.+?):(\d+))?$`)
	reDeviceOld     = lazyregexp.New(`^(.+?):(\d+):(.+?) \[(0x[0-9a-fA-F]+)\]$`)
	reRace          = lazyregexp.New(`(\w+) access at (.+?)(?:\+(0x[0-9a-fA-F]+))? in (.+?):(\d+)(?::(.+?))?(?: \[\d+ hazards?\])?$`)
	reOldHostFrame  = lazyregexp.New(`^(\S+) \((.+?)(?: \+ 0x[0-9a-fA-F]+)?\)$`)
	reSummary       = lazyregexp.New(`ERROR SUMMARY: (\d+) errors?`)
)

// ParseSanitizer reads compute-sanitizer (or cuda-memcheck) output; other
// program output interleaved with it is skipped.
func ParseSanitizer(r io.Reader) (*SanitizerReport, error) {
	lr := newLineReader(r, maxLineLen)
	p := &sanitizerParser{rep: &SanitizerReport{Summary: -1}, lastHost: -1}
	seen := false
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line := cleanLine(raw)
		if !strings.HasPrefix(line, sanitizerPrefix) {
			continue
		}
		seen = true
		if !p.line(strings.TrimSpace(strings.TrimLeft(line, "=")), lr.num) {
			return p.rep, nil
		}
	}
	if !seen {
		return nil, errors.New("no compute-sanitizer output (\"=========\" lines) found")
	}
	return p.rep, nil
}

// sanitizerParser is the state of ParseSanitizer between lines.
type sanitizerParser struct {
	rep      *SanitizerReport
	cur      *SanitizerError // the error the detail lines belong to
	lastHost int             // index of the host frame a following "in MODULE" line belongs to
}

// line reads one sanitizer line s (without its "=========" prefix), line
// num of the log. It returns false when the report holds as many errors as
// it may.
func (p *sanitizerParser) line(s string, num int) bool {
	switch {
	case s == "" || strings.HasPrefix(s, "COMPUTE-SANITIZER") || strings.HasPrefix(s, "CUDA-MEMCHECK"):
		if strings.Contains(s, "memcheck") {
			p.rep.Tool = "memcheck"
		}
	case reSummary.MatchString(s):
		n, _ := strconv.Atoi(reSummary.FindStringSubmatch(s)[1])
		p.rep.Summary = n
	case startsSanitizerError(s):
		if len(p.rep.Errors) >= maxThreads {
			return false
		}
		p.startError(s, num)
	case p.cur == nil:
	default:
		p.detail(s)
	}
	return true
}

// startsSanitizerError reports whether s is the first line of an error.
func startsSanitizerError(s string) bool {
	return reInvalidAccess.MatchString(s) || strings.HasPrefix(s, "Error: Race reported") ||
		strings.HasPrefix(s, "Invalid ") || strings.HasPrefix(s, "Program hit ") ||
		strings.HasPrefix(s, "Uninitialized ") || strings.HasPrefix(s, "Barrier error") ||
		strings.HasPrefix(s, "Malloc/Free error") || strings.HasPrefix(s, "Warning: Race reported")
}

// startError starts a new error from its first line.
func (p *sanitizerParser) startError(s string, num int) {
	p.rep.Errors = append(p.rep.Errors, SanitizerError{Message: s, LogLine: num})
	cur := &p.rep.Errors[len(p.rep.Errors)-1]
	p.cur, p.lastHost = cur, -1
	if m := reInvalidAccess.FindStringSubmatch(s); m != nil {
		cur.Space = strings.Trim(m[1], "_")
		cur.Access = m[2]
		cur.Size, _ = strconv.Atoi(m[3])
	}
	if strings.Contains(s, "Race reported") {
		if m := reRace.FindStringSubmatch(s); m != nil {
			f := raceFrame(m)
			cur.Function, cur.Offset, cur.File, cur.Line = f.Function, f.PC, f.File, f.Line
			cur.Access = strings.ToLower(f.Access)
		}
	}
}

// detail reads a line of the current error: the other access of a race,
// where, which thread, the address, the frames.
func (p *sanitizerParser) detail(s string) {
	cur := p.cur
	switch {
	case strings.HasPrefix(s, "and ") && strings.Contains(s, " access at "):
		if m := reRace.FindStringSubmatch(strings.TrimPrefix(s, "and ")); m != nil {
			f := raceFrame(m)
			cur.Race = &f
		}
	case strings.HasPrefix(s, "at "):
		cur.readAt(s)
	case reByThread.MatchString(s):
		m := reByThread.FindStringSubmatch(s)
		for i := 0; i < 3; i++ {
			cur.Thread[i] = atou32(m[1+i])
			cur.Block[i] = atou32(m[4+i])
		}
		cur.HasThread = true
	case reAddress.MatchString(s):
		m := reAddress.FindStringSubmatch(s)
		cur.Address, _ = strconv.ParseUint(m[1][2:], 16, 64)
		if note := strings.TrimSpace(m[2]); note != "" {
			cur.AddressNote = append(cur.AddressNote, note)
		}
	case strings.HasPrefix(s, "and is ") || strings.HasPrefix(s, "and ") && strings.Contains(s, "allocation"):
		if len(cur.AddressNote) < 8 {
			cur.AddressNote = append(cur.AddressNote, s)
		}
	case strings.HasPrefix(s, "Host Frame:"):
		if m := reHostFrame.FindStringSubmatch(s); m != nil && len(cur.HostFrames) < maxFrames {
			cur.HostFrames = append(cur.HostFrames, hostFrame(m))
			p.lastHost = len(cur.HostFrames) - 1
		}
	case strings.HasPrefix(s, "in ") && p.lastHost >= 0 && cur.HostFrames[p.lastHost].Module == "":
		// Older versions put the module on the next line.
		cur.HostFrames[p.lastHost].Module = strings.TrimSpace(s[3:])
	case strings.HasPrefix(s, "Device Frame:"):
		if len(cur.DeviceFrames) < maxFrames {
			cur.DeviceFrames = append(cur.DeviceFrames, parseDeviceFrame(strings.TrimSpace(s[len("Device Frame:"):])))
		}
	}
}

// readAt reads where the error is: "at FUNC+0xOFF in FILE:LINE", the older
// "at 0xOFF in FILE:LINE:FUNC", or "at FUNC+0xOFF".
func (e *SanitizerError) readAt(s string) {
	if m := reAtNew.FindStringSubmatch(s); m != nil {
		e.Function = m[1]
		e.Offset, _ = strconv.ParseUint(m[2][2:], 16, 64)
		e.File = m[3]
		e.Line, _ = strconv.Atoi(m[4])
	} else if m := reAtOld.FindStringSubmatch(s); m != nil {
		e.Offset, _ = strconv.ParseUint(m[1][2:], 16, 64)
		e.File = m[2]
		e.Line, _ = strconv.Atoi(m[3])
		e.Function = m[4]
	} else if m := reAtNoLine.FindStringSubmatch(s); m != nil {
		e.Function = m[1]
		e.Offset, _ = strconv.ParseUint(m[2][2:], 16, 64)
	}
}

// hostFrame is the frame of a "Host Frame:" line reHostFrame matched.
func hostFrame(m []string) SanitizerFrame {
	pc, _ := strconv.ParseUint(m[2][2:], 16, 64)
	f := SanitizerFrame{Function: m[1], PC: pc, Module: m[3]}
	if f.Module == "" {
		// cuda-memcheck: "Host Frame:/lib/libcuda.so.1 (cuLaunchKernel + 0x34e) [0x2d0f2e]".
		if mm := reOldHostFrame.FindStringSubmatch(f.Function); mm != nil {
			f.Module, f.Function = mm[1], mm[2]
		} else if strings.HasPrefix(f.Function, "/") || strings.HasPrefix(f.Function, "./") {
			f.Module, f.Function = f.Function, ""
		}
	}
	return f
}

// parseDeviceFrame reads "FUNC+0xOFF in FILE:LINE" (compute-sanitizer
// 2022+) or "FILE:LINE:FUNC [0xOFF]" (older releases and cuda-memcheck).
func parseDeviceFrame(s string) SanitizerFrame {
	if m := reDeviceOld.FindStringSubmatch(s); m != nil {
		f := SanitizerFrame{File: m[1], Function: m[3]}
		f.Line, _ = strconv.Atoi(m[2])
		f.PC, _ = strconv.ParseUint(m[4][2:], 16, 64)
		return f
	}
	if m := reDeviceNew.FindStringSubmatch(s); m != nil {
		f := SanitizerFrame{Function: m[1], File: m[3]}
		f.PC, _ = strconv.ParseUint(m[2][2:], 16, 64)
		f.Line, _ = strconv.Atoi(m[4])
		return f
	}
	return SanitizerFrame{Function: s}
}

func raceFrame(m []string) SanitizerFrame {
	f := SanitizerFrame{Access: m[1], Function: m[2], File: m[4]}
	if m[3] != "" {
		f.PC, _ = strconv.ParseUint(m[3][2:], 16, 64)
	} else if strings.HasPrefix(m[2], "0x") {
		// Old form: "at 0x150 in race.cu:10:race_kernel(int*)".
		f.PC, _ = strconv.ParseUint(m[2][2:], 16, 64)
		f.Function = m[6]
	}
	f.Line, _ = strconv.Atoi(m[5])
	return f
}

func atou32(s string) uint32 {
	v, _ := strconv.ParseUint(s, 10, 32)
	return uint32(v)
}
