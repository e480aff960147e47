package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/input"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/native"
)

// A format is one kind of dump faultline reads. sniff says from the first
// bytes of the decompressed dump whether it may be one; open reads it, or
// returns errNotThisFormat when it turns out not to be, and the next format
// is tried. Adding an input format is one entry here and its parser.
type format struct {
	name  string
	sniff func(head []byte) bool
	open  func(in *input.Input, opt Options) (*Session, error)
}

// formats are tried in order; the first whose sniff and open accept the
// dump reads it.
var formats = []format{
	{"cuda-core", cuda.IsCoreHeader, openGPUCore},
	{"gpu-log", isGPULog, openGPULog},
	{"faulthandler", isText, openTextLog(logs.ReadFaulthandlerCrash)},
	{"python-traceback", isText, openTextLog(logs.ReadTracebackCrash)},
	{"gdb-log", isText, openTextLog(logs.ReadGDBCrash)},
	{"elf-core", isBinary, openELFCore},
}

// errNotThisFormat is a format's open declining a dump its sniff let in.
var errNotThisFormat = errors.New("not this format")

// openInput reads an opened dump with the first format that takes it.
func openInput(in *input.Input, opt Options) (*Session, error) {
	if len(in.Head) == 0 {
		name := in.Name
		if name == "-" {
			name = "standard input"
		}
		return nil, fmt.Errorf("%s is empty: there is no dump to read", name)
	}
	for _, f := range formats {
		if !f.sniff(in.Head) {
			continue
		}
		s, err := f.open(in, opt)
		if errors.Is(err, errNotThisFormat) {
			continue
		}
		return s, err
	}
	return nil, fmt.Errorf("%s is a text file with no crash faultline can read "+
		"(faulthandler output, a Python traceback or a gdb backtrace)", in.Name)
}

// textSniffBytes is how much of a dump isText looks at.
const textSniffBytes = 4096

// isText says whether the dump's first 4 KiB look like text: no ELF
// magic, and under 1% NUL or invalid UTF-8 bytes (a cut at the end is fine).
func isText(head []byte) bool {
	b := head[:min(len(head), textSniffBytes)]
	n := len(b)
	if n == 0 || bytes.HasPrefix(b, []byte("\x7fELF")) {
		return false
	}
	// A NUL byte counts as one bad byte, not as proof of a binary: a job's
	// log may hold a few (PyTorch's DataLoader worker handler writes its
	// message with the C string's terminating NUL).
	bad := 0
	for len(b) > 0 {
		rn, size := utf8.DecodeRune(b)
		if rn == 0 || rn == utf8.RuneError && size <= 1 && len(b) >= utf8.UTFMax {
			bad++
		}
		b = b[max(size, 1):]
	}
	return bad*100 < n // under 1% invalid bytes
}

// isBinary is every dump that is not text: read as an ELF core, which
// says what is wrong with one that is not.
func isBinary(head []byte) bool { return !isText(head) }

func isGPULog(head []byte) bool { return logs.GPULogFormat(head) != "" }

// openELFCore reads a native ELF core (package native).
func openELFCore(in *input.Input, opt Options) (*Session, error) {
	core, err := elfcore.OpenFile(in.File, in.Name)
	if err != nil {
		var fe *elfcore.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s is not a core dump faultline can read: %w", displayName(in), err)
		}
		return nil, err
	}
	p, err := native.Open(core, opt)
	if err != nil {
		core.Close()
		return nil, err
	}
	c := p.Crash(in.Name)
	if opt.SanitizerLog != "" {
		logs.AttachSanitizerLog(c, opt.SanitizerLog)
	}
	return &Session{Crash: c, p: p}, nil
}

// openGPUCore reads an NVIDIA GPU core dump (package cuda).
func openGPUCore(in *input.Input, _ Options) (*Session, error) {
	c, d, err := cuda.Read(in.Name, in.Reader())
	if err != nil {
		return nil, err
	}
	return &Session{Crash: c, gpu: d}, nil
}

// openGPULog reads a compute-sanitizer, cuda-gdb or PyTorch CUDA log.
func openGPULog(in *input.Input, _ Options) (*Session, error) {
	c, err := logs.ReadGPUCrash(in.Name, in.Reader())
	if err != nil {
		return nil, err
	}
	return &Session{Crash: c}, nil
}

// textLogReader is a log parser's adapter (package logs): ok is false
// when the log is not of its kind.
type textLogReader func(path string, open func() (io.ReadCloser, error)) (c *Crash, ok bool, err error)

// openTextLog makes a format's open from a text log reader.
func openTextLog(read textLogReader) func(*input.Input, Options) (*Session, error) {
	return func(in *input.Input, _ Options) (*Session, error) {
		open := func() (io.ReadCloser, error) { return dropNUL{in.Reader()}, nil }
		c, ok, err := read(in.Name, open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		if !ok {
			return nil, errNotThisFormat
		}
		return &Session{Crash: c}, nil
	}
}

// dropNUL reads a text log without its NUL bytes, so that a line a NUL
// begins ("\x00Fatal Python error") reads as the line it is.
type dropNUL struct{ io.ReadCloser }

func (d dropNUL) Read(p []byte) (int, error) {
	for {
		n, err := d.ReadCloser.Read(p)
		kept := copy(p, bytes.ReplaceAll(p[:n], []byte{0}, nil))
		if kept > 0 || n == 0 || err != nil {
			return kept, err
		}
	}
}

// displayName names the input in messages: "-" is standard input.
func displayName(in *input.Input) string {
	if in.Name == "-" {
		return "standard input (-)"
	}
	return in.Name
}
