package logs

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// lineReader reads lines of at most max bytes (longer ones are cut, the
// rest of the line skipped), tracking the line number and byte offset.
type lineReader struct {
	br  *bufio.Reader
	max int
	num int   // number of the line last returned (1-based)
	off int64 // offset of the line last returned
	pos int64 // offset of the next line
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" (or "\r\n"); ok is false at
// the end of the input.
func (lr *lineReader) next() (line string, ok bool, err error) {
	lr.buf = lr.buf[:0]
	start := lr.pos
	read := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.pos += int64(len(chunk))
		if len(chunk) > 0 {
			read = true
		}
		if room := lr.max - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if !read {
				return "", false, nil
			}
			break
		}
		if err != nil {
			return "", false, err
		}
		break
	}
	lr.num++
	lr.off = start
	s := strings.TrimSuffix(string(lr.buf), "\n")
	return strings.TrimSuffix(s, "\r"), true, nil
}

// cleanLine removes what terminals and pasted sessions add to gdb's text:
// ANSI escape sequences (gdb's styling), carriage returns and "(gdb) "
// prompts.
func cleanLine(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = stripANSI(s)
	}
	if strings.IndexByte(s, '\r') >= 0 {
		// A progress line overwritten in place: keep what was written last.
		s = s[strings.LastIndexByte(s, '\r')+1:]
	}
	for strings.HasPrefix(s, "(gdb) ") {
		s = s[len("(gdb) "):]
	}
	return s
}

// stripANSI removes CSI sequences (ESC [ params final-byte, ECMA-48 §5.4)
// and other two-byte ESC sequences.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j // skips the final byte too
			continue
		}
		i++ // ESC and the byte after it
	}
	return b.String()
}
