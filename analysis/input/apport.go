package input

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// An apport problem report (Ubuntu's /var/crash/*.crash, apport's
// problem_report.py) is an RFC 822-style text: "Key: value" lines, a value
// continued on lines that start with a space, ProblemType first. A binary
// value is written "Key: base64" followed by continuation lines, each the
// base64 of one block of a compressed stream: a gzip member whose header
// is the first block (older reports: a bare zlib stream; newer ones may
// hold a zstd frame). The core is the CoreDump field.

// apportMagic starts every apport report: problem_report.py writes
// ProblemType first.
var apportMagic = []byte("ProblemType: ")

// isApport reports whether head starts an apport report.
func isApport(head []byte) bool { return bytes.HasPrefix(head, apportMagic) }

// Bounds on what an apport report may make the reader hold.
const (
	// maxApportLine caps one line: apport's base64 lines encode blocks of
	// a compressor fed 128 KiB chunks (problem_report.CHUNK_SIZE).
	maxApportLine = 4 << 20
	// maxApportValue caps a text value kept (Dependencies lists a few
	// hundred packages); longer values are cut.
	maxApportValue = 1 << 20
	// maxApportFields caps the fields read.
	maxApportFields = 10000
)

// apportFields are the text fields the reader keeps.
var apportFields = map[string]bool{
	"ProblemType": true, "ExecutablePath": true, "ProcCmdline": true, "Package": true,
	"SourcePackage": true, "PackageArchitecture": true, "Dependencies": true,
}

// ApportError is a malformed apport report: what is wrong and the line.
type ApportError struct {
	Line int
	Msg  string
}

func (e *ApportError) Error() string {
	return fmt.Sprintf("apport report, line %d: %s", e.Line, e.Msg)
}

// apportReader reads one report line by line.
type apportReader struct {
	br   *bufio.Reader
	line int
}

// next returns the next line without its newline; io.EOF at the end.
func (r *apportReader) next() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &ApportError{r.line + 1, fmt.Sprintf("a line longer than %d bytes", maxApportLine)}
	case err == io.EOF && len(b) == 0:
		return nil, io.EOF
	case err != nil && err != io.EOF:
		return nil, err
	}
	r.line++
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// continues reports whether the next line continues the current value.
func (r *apportReader) continues() bool {
	b, err := r.br.Peek(1)
	return err == nil && b[0] == ' '
}

// readApport reads an apport report from src: its text fields into a
// Report, the CoreDump field's core, decoded and decompressed, into core
// (at most MaxPlainBytes). damaged says why the core broke off, when it
// did (the bytes written are then read like a truncated core).
func readApport(src io.Reader, core io.Writer) (rep *Report, damaged string, err error) {
	r := &apportReader{br: bufio.NewReaderSize(src, maxApportLine)}
	fields := map[string]string{}
	sawCore := false
	for n := 0; ; n++ {
		line, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		if n == maxApportFields {
			return nil, "", &ApportError{r.line, fmt.Sprintf("more than %d fields", maxApportFields)}
		}
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(key) == 0 || len(key) > 256 || bytes.ContainsAny(key, " \t") {
			return nil, "", &ApportError{r.line, fmt.Sprintf("%q is not a \"Key: value\" line", clip(line))}
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case string(key) == "CoreDump" && string(value) == "base64":
			if sawCore {
				return nil, "", &ApportError{r.line, "a second CoreDump field"}
			}
			sawCore = true
			if damaged, err = copyCoreDump(r, core); err != nil {
				return nil, "", err
			}
		case string(value) == "base64":
			if err := r.skipValue(); err != nil {
				return nil, "", err
			}
		default:
			v, err := r.textValue(value, apportFields[string(key)])
			if err != nil {
				return nil, "", err
			}
			if apportFields[string(key)] {
				fields[string(key)] = v
			}
		}
	}
	if !sawCore {
		return nil, "", errors.New("the apport report has no CoreDump field (apport keeps the core only of crashes it reports, " +
			"and drops it when the report is too large): nothing to read")
	}
	return apportReport(fields), damaged, nil
}

// textValue reads the rest of a text value that starts with first: its
// continuation lines, each without its leading space, joined by newlines;
// kept (at most maxApportValue bytes) only when keep is set.
func (r *apportReader) textValue(first []byte, keep bool) (string, error) {
	var b strings.Builder
	add := func(p []byte) {
		if keep && b.Len() < maxApportValue {
			b.Write(p[:min(len(p), maxApportValue-b.Len())])
		}
	}
	add(first)
	for r.continues() {
		line, err := r.next()
		if err != nil {
			return "", err
		}
		if b.Len() > 0 || len(first) > 0 {
			add([]byte("\n"))
		}
		add(line[1:])
	}
	return b.String(), nil
}

// skipValue skips the continuation lines of a value.
func (r *apportReader) skipValue() error {
	for r.continues() {
		if _, err := r.next(); err != nil {
			return err
		}
	}
	return nil
}

// copyCoreDump decodes the CoreDump value's lines (each its own base64)
// into the compressed stream they carry and writes its plain bytes to w,
// capped as a compressed dump is.
func copyCoreDump(r *apportReader, w io.Writer) (damaged string, err error) {
	enc := &base64Lines{r: r}
	head := bufio.NewReaderSize(enc, 64<<10)
	magic, _ := head.Peek(magicLen)
	if enc.err != nil {
		return "", enc.err
	}
	format := compressionOf(magic)
	if format == "" && len(magic) >= 2 && magic[0] == 0x78 {
		format = "zlib" // reports older than apport 0.9x: no gzip header
	}
	if format != "gzip" && format != "zstd" && format != "zlib" {
		return "", &ApportError{enc.first, "CoreDump is not gzip, zstd or zlib data"}
	}
	plain, err := decompress(format, head)
	if err != nil {
		return "", fmt.Errorf("apport report's CoreDump: %w", err)
	}
	defer plain.Close()
	pr := bufio.NewReaderSize(plain, 64<<10)
	if p, _ := pr.Peek(4); !bytes.Equal(p, []byte("\x7fELF")) {
		if enc.err != nil {
			return "", enc.err
		}
		return "", &ApportError{enc.first, "CoreDump does not decompress to an ELF core"}
	}
	damaged, err = copyCapped(w, pr, "apport CoreDump "+format)
	if err != nil {
		return "", err
	}
	// The compressed stream may end before its lines do.
	return damaged, r.skipValue()
}

// base64Lines reads the bytes a binary value's continuation lines encode,
// each line decoded on its own (problem_report.py pads every line).
type base64Lines struct {
	r     *apportReader
	buf   []byte
	first int   // the line the value's data starts on
	err   error // the first bad line (io.EOF at the value's end)
}

func (b *base64Lines) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		if !b.r.continues() {
			b.err = io.EOF
			return 0, io.EOF
		}
		line, err := b.r.next()
		if err != nil {
			b.err = err
			return 0, err
		}
		if b.first == 0 {
			b.first = b.r.line
		}
		dec, err := base64.StdEncoding.AppendDecode(b.buf[:0], bytes.TrimSpace(line))
		if err != nil {
			b.err = &ApportError{b.r.line, "bad base64: " + err.Error()}
			return 0, b.err
		}
		b.buf = dec
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

// clip shortens a line for a message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// apportReport makes the Report of an apport report's text fields.
func apportReport(f map[string]string) *Report {
	rep := &Report{Kind: "apport", Executable: f["ExecutablePath"], Command: f["ProcCmdline"]}
	if p, ok := apportPackage(f["Package"]); ok {
		p.Program, p.Source, p.Arch = true, f["SourcePackage"], f["PackageArchitecture"]
		rep.Packages = append(rep.Packages, p)
	}
	for _, line := range strings.Split(f["Dependencies"], "\n") {
		if p, ok := apportPackage(line); ok {
			rep.Packages = append(rep.Packages, p)
		}
	}
	return rep
}

// apportPackage reads one package of Package or Dependencies:
// "NAME VERSION", "NAME (not installed)", then apport's suffixes
// " [modified: FILE…]" and " [origin: ARCHIVE]".
func apportPackage(s string) (model.Package, bool) {
	s = strings.TrimSpace(s)
	var p model.Package
	for strings.HasSuffix(s, "]") {
		i := strings.LastIndex(s, " [")
		if i < 0 {
			break
		}
		tag, val, _ := strings.Cut(s[i+2:len(s)-1], ": ")
		switch tag {
		case "origin":
			p.Archive = val
		case "modified":
			p.Modified = strings.Fields(val)
		}
		s = strings.TrimSpace(s[:i])
	}
	name, version, _ := strings.Cut(s, " ")
	if name == "" {
		return p, false
	}
	p.Name, p.Origin = name, "apport"
	if version != "(not installed)" {
		p.Version = strings.TrimSpace(version)
	}
	return p, true
}
