package input

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// compressors write each format faultline undoes, with its own library's
// writer: what Open reads back must be the plain bytes.
var compressors = map[string]func(io.Writer) (io.WriteCloser, error){
	"gzip": func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriter(w), nil },
	"zstd": func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w) },
	"xz":   func(w io.Writer) (io.WriteCloser, error) { return xz.NewWriter(w) },
	"lz4":  func(w io.Writer) (io.WriteCloser, error) { return lz4.NewWriter(w), nil },
}

func plainBytes() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < HeadSize+12345; i++ {
		b.WriteString(strings.Repeat("frame ", i%7) + "line\n")
	}
	return b.Bytes()
}

// privateTemp points the temporary files of this test at a directory of
// its own and returns a function listing what is left there.
func privateTemp(t *testing.T) func() []string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		return m
	}
}

func readAll(t *testing.T, in *Input) []byte {
	t.Helper()
	r := in.Reader()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenCompressed(t *testing.T) {
	plain := plainBytes()
	for name, newWriter := range compressors {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := newWriter(&buf)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(plain)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "dump."+name)
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			left := privateTemp(t)
			in, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if in.Compression != name || in.Name != path || in.Size != int64(len(plain)) {
				t.Errorf("Compression %q Name %q Size %d", in.Compression, in.Name, in.Size)
			}
			if !bytes.Equal(in.Head, plain[:HeadSize]) {
				t.Errorf("Head is not the first %d plain bytes", HeadSize)
			}
			if got := readAll(t, in); !bytes.Equal(got, plain) {
				t.Errorf("read %d bytes, not the %d plain ones", len(got), len(plain))
			}
			if got := readAll(t, in); !bytes.Equal(got, plain) {
				t.Errorf("a second Reader does not start over")
			}
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if l := left(); len(l) > 0 {
				t.Errorf("Close left %v", l)
			}
		})
	}
}

func TestOpenPlainInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.txt")
	os.WriteFile(path, []byte("Traceback (most recent call last):\n"), 0o600)
	in, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Compression != "" || in.File.Name() != path || string(in.Head) != "Traceback (most recent call last):\n" {
		t.Errorf("plain file: compression %q file %s head %q", in.Compression, in.File.Name(), in.Head)
	}
}

func TestOpenStdin(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("hello from a pipe\n"))
	zw.Close()
	for name, data := range map[string][]byte{"plain": []byte("hello from a pipe\n"), "gzip": buf.Bytes()} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { w.Write(data); w.Close() }()
			saved := os.Stdin
			os.Stdin = r
			defer func() { os.Stdin = saved; r.Close() }()
			in, err := Open(Stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if _, err := os.Stat(in.File.Name()); in.Name != "-" || !os.IsNotExist(err) || string(readAll(t, in)) != "hello from a pipe\n" {
				t.Errorf("stdin: name %q, spool file %s not unlinked (%v)", in.Name, in.File.Name(), err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	left := privateTemp(t)
	for name, data := range map[string][]byte{
		"gzip": {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3},
		"zstd": {0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff},
		"xz":   {0xfd, '7', 'z', 'X', 'Z', 0, 9, 9, 9},
		"lz4":  {0x04, 0x22, 0x4d, 0x18, 0x7f, 0x00},
	} {
		path := filepath.Join(dir, "corrupt."+name)
		os.WriteFile(path, data, 0o600)
		in, err := Open(path)
		if err == nil {
			in.Close()
			t.Errorf("corrupt %s stream opened", name)
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("corrupt %s: error %q does not name the file", name, err)
		}
	}
	if l := left(); len(l) > 0 {
		t.Errorf("failed opens left %v", l)
	}
}
