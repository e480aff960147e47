// Package regular opens the files whose names come from untrusted input —
// a dump, a path a core or a log names (mapped modules, debug links, GPU
// code objects, source files), an index-cache entry, a path in a protocol
// message — and reads them only if they are regular files.
//
// A name can point anywhere: a FIFO (an open blocks until a writer comes),
// /dev/stdin or /proc/self/fd/0 (the server's own protocol stream),
// /dev/tty (waits for a key), /dev/zero (never ends), a directory. Open
// opens without blocking (O_NONBLOCK, and O_NOCTTY so a terminal never
// becomes the controlling one), checks the opened descriptor with fstat,
// and refuses everything but a regular file before a byte is read. Reads
// are bounded by the size fstat gave, so a file that grows, or a /proc
// file that reads as regular with size 0, costs nothing.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is a path that names something other than a regular
// file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// TooLargeError is a regular file larger than its reader's cap.
type TooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit", e.Path, e.Size, e.Max)
}

// Kind names the type of a file mode for messages ("a FIFO").
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a " + m.Type().String() + " file"
}

// Open opens path for reading if it is a regular file, without blocking
// whatever it is, and returns the file and what fstat said of it.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	// O_NONBLOCK has no effect on a regular file's reads; nothing to clear.
	return f, st, nil
}

// ReadFile reads the regular file at path whole, refusing one over max
// bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Max: max}
	}
	b := make([]byte, st.Size())
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b[:n], nil // a file that shrank since fstat: what it still holds
}

// ReadAt reads up to len(b) bytes at off of the regular file at path (no
// further than the size fstat gave) and returns how many it read.
func ReadAt(path string, b []byte, off int64) (int, error) {
	f, st, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if off < 0 || off >= st.Size() {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), st.Size()-off)]
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}
