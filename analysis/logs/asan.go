package logs

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// ASanReport is the error report a sanitizer runtime (compiler-rt's
// AddressSanitizer, and the same shape from LeakSanitizer and
// HWAddressSanitizer) printed to stderr before it aborted: the bug type,
// the bad access, the stack of the access and, for heap errors, where
// the memory was allocated and freed.
type ASanReport struct {
	// Tool is "AddressSanitizer", "HWAddressSanitizer", ...
	Tool string
	// PID is the "==PID==" the runtime prefixes its lines with.
	PID int
	// Bug is the bug type: "heap-use-after-free", "heap-buffer-overflow",
	// "stack-buffer-overflow", "SEGV", "attempting double-free", ...
	Bug string
	// Address is the bad address (0 when the report names none).
	Address uint64
	// Access is "read" or "write" and Size its width in bytes, when the
	// report has a "READ of size N" line.
	Access string
	Size   int
	// Stack is the stack of the error, innermost first; FreedBy and
	// AllocatedBy are the stacks where the memory was freed and allocated.
	Stack, FreedBy, AllocatedBy []ASanFrame
	// Summary is the "SUMMARY: ..." line without its prefix.
	Summary string
}

// ASanFrame is one "#N 0xPC in FUNCTION FILE:LINE:COL" line.
type ASanFrame struct {
	PC       uint64
	Function string
	File     string
	Line     int
	Column   int
	// Module is "(module+0xoffset)"'s module, for frames without a file.
	Module string
}

// ErrNoASanReport: the text holds no sanitizer error report.
var ErrNoASanReport = errors.New("no sanitizer error report (==PID==ERROR: AddressSanitizer: ...)")

// Caps on what a hostile log can make the parser keep.
const (
	maxASanFrames = 512
	maxASanLine   = 64 << 10
	maxASanLines  = 1 << 20
)

var (
	sanHeader = lazyregexp.New(`^==(\d+)==ERROR: (\w+): (.+?)(?: on (?:unknown )?address (0x[0-9a-fA-F]+))?(?: at pc .*| \(.*)?$`)
	sanAccess = lazyregexp.New(`^(READ|WRITE) of size (\d+) at (0x[0-9a-fA-F]+)`)
	sanFrame  = lazyregexp.New(`^\s*#(\d+) (0x[0-9a-fA-F]+) +(.*)$`)
)

// ParseASan reads the first sanitizer error report in r.
func ParseASan(r io.Reader) (*ASanReport, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxASanLine)
	var rep *ASanReport
	stack := (*[]ASanFrame)(nil)
	for n := 0; sc.Scan() && n < maxASanLines; n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if rep == nil {
			if m := sanHeader.FindStringSubmatch(line); m != nil {
				rep = &ASanReport{Tool: m[2], Bug: strings.TrimSpace(m[3])}
				rep.PID, _ = strconv.Atoi(m[1])
				rep.Address, _ = parseHex(m[4])
				stack = &rep.Stack
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "SUMMARY: "):
			rep.Summary = strings.TrimPrefix(line, "SUMMARY: ")
			return rep, nil
		case sanAccess.MatchString(line):
			m := sanAccess.FindStringSubmatch(line)
			rep.Access = strings.ToLower(m[1])
			rep.Size, _ = strconv.Atoi(m[2])
		case strings.HasPrefix(line, "freed by thread"):
			stack = &rep.FreedBy
		case strings.HasPrefix(line, "previously allocated by thread"), strings.HasPrefix(line, "allocated by thread"):
			stack = &rep.AllocatedBy
		case strings.HasPrefix(strings.TrimSpace(line), "#"):
			if f, ok := parseASanFrame(line); ok && len(*stack) < maxASanFrames {
				*stack = append(*stack, f)
			}
		case strings.TrimSpace(line) == "":
			// Blank lines end a stack; the next header names the next one.
		}
	}
	if err := sc.Err(); err != nil && rep == nil {
		return nil, err
	}
	if rep == nil {
		return nil, ErrNoASanReport
	}
	return rep, nil
}

func parseASanFrame(line string) (ASanFrame, bool) {
	m := sanFrame.FindStringSubmatch(line)
	if m == nil {
		return ASanFrame{}, false
	}
	f := ASanFrame{}
	f.PC, _ = parseHex(m[2])
	rest := strings.TrimSpace(m[3])
	if i := strings.Index(rest, " (BuildId: "); i >= 0 {
		rest = rest[:i]
	}
	if !strings.HasPrefix(rest, "in ") {
		// "#3 0x... (/lib/libfoo.so+0x1234)": no symbol.
		f.Module = moduleOf(rest)
		return f, true
	}
	rest = strings.TrimPrefix(rest, "in ")
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		f.Function, f.Module = rest[:i], moduleOf(rest[i+1:])
		return f, true
	}
	f.Function = rest
	if i := strings.LastIndexByte(rest, ' '); i >= 0 {
		loc := rest[i+1:]
		parts := strings.Split(loc, ":")
		if len(parts) >= 2 && len(parts) <= 3 {
			line, err := strconv.Atoi(parts[1])
			if err == nil {
				f.Function, f.File, f.Line = rest[:i], parts[0], line
				if len(parts) == 3 {
					f.Column, _ = strconv.Atoi(parts[2])
				}
			}
		}
	}
	return f, true
}

// moduleOf reads "(/path/libfoo.so+0x1234)" as "/path/libfoo.so".
func moduleOf(s string) string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	if i := strings.LastIndex(s, "+0x"); i >= 0 {
		s = s[:i]
	}
	return s
}

func parseHex(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
	return v, err == nil
}

// IsASanReport reports whether head (the start of a file) holds a
// sanitizer's error report header ("==PID==ERROR: AddressSanitizer: ...").
func IsASanReport(head []byte) bool {
	for _, line := range strings.Split(string(head), "\n") {
		if sanHeader.MatchString(strings.TrimRight(line, "\r")) {
			return true
		}
	}
	return false
}
