package inflate

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"debug/elf"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kzlib "github.com/klauspost/compress/zlib"
)

// corpus is data that compresses the way debug sections do (repeats at
// every distance, runs, literals) and some that does not.
func corpus(seed int64, n int) []byte {
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, 0, n)
	words := []string{"DW_TAG_subprogram", "std::vector<int>", "\x00\x00\x00", "../sysdeps/x86_64", "__pthread_kill"}
	for len(b) < n {
		switch r.Intn(5) {
		case 0:
			b = append(b, words[r.Intn(len(words))]...)
		case 1:
			if len(b) > 0 {
				d := 1 + r.Intn(min(len(b), 32768))
				for k := 3 + r.Intn(300); k > 0 && len(b) < n; k-- {
					b = append(b, b[len(b)-d])
				}
			}
		case 2:
			b = append(b, bytes.Repeat([]byte{byte(r.Intn(256))}, r.Intn(600))...)
		default:
			for k := r.Intn(64); k > 0; k-- {
				b = append(b, byte(r.Intn(256)))
			}
		}
	}
	return b[:n]
}

func zlibBytes(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	// Flushes make empty stored blocks and block boundaries mid-stream.
	for i := 0; i < len(data); i += 100000 {
		w.Write(data[i:min(i+100000, len(data))])
		if i%300000 == 0 {
			w.Flush()
		}
	}
	w.Close()
	return buf.Bytes()
}

// TestAgainstCompressFlate: every level (stored, fixed and dynamic
// blocks), whole and in random steps, gives compress/flate's bytes.
func TestAgainstCompressFlate(t *testing.T) {
	for _, level := range []int{flate.NoCompression, flate.BestSpeed, 5, flate.BestCompression, flate.HuffmanOnly} {
		for seed := int64(1); seed <= 3; seed++ {
			data := corpus(seed, 700000+int(seed)*1234)
			z := zlibBytes(t, data, level)
			out := make([]byte, len(data))
			d, err := NewZlib(z, out)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewSource(seed))
			for d.Written() < len(out) {
				n, err := d.DecodeTo(d.Written() + r.Intn(40000))
				if err != nil {
					t.Fatalf("level %d seed %d: %v after %d bytes", level, seed, err, n)
				}
				if !bytes.Equal(out[:n], data[:n]) {
					t.Fatalf("level %d seed %d: output differs within the first %d bytes", level, seed, n)
				}
			}
		}
	}
}

// TestDebugSections decodes the compressed sections of libc6-dbg's file
// for libc and compares them with compress/zlib's output.
func TestDebugSections(t *testing.T) {
	files, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug")
	if len(files) == 0 {
		t.Skip("no debug files here (libc6-dbg)")
	}
	tested := 0
	for _, p := range files {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_COMPRESSED == 0 || !strings.HasPrefix(s.Name, ".debug") || tested > 40 {
				continue
			}
			raw := make([]byte, s.FileSize)
			fh, _ := os.Open(p)
			fh.ReadAt(raw, int64(s.Offset))
			fh.Close()
			zr, err := zlib.NewReader(bytes.NewReader(raw[24:]))
			if err != nil {
				continue
			}
			var want bytes.Buffer
			want.ReadFrom(zr)
			out := make([]byte, s.Size)
			d, err := NewZlib(raw[24:], out)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := d.DecodeTo(len(out)); err != nil || !bytes.Equal(out[:n], want.Bytes()) {
				t.Fatalf("%s %s: %d bytes, %v", p, s.Name, n, err)
			}
			tested++
		}
		f.Close()
	}
	if tested == 0 {
		t.Skip("no compressed debug sections")
	}
}

// TestMalformed: truncations, flipped bits and wrong sizes give errors,
// never a panic or a write past the buffer.
func TestMalformed(t *testing.T) {
	data := corpus(7, 50000)
	z := zlibBytes(t, data, 6)
	for cut := 0; cut < len(z); cut += 97 {
		out := make([]byte, len(data))
		d, err := NewZlib(z[:cut], out)
		if err != nil {
			continue
		}
		if _, err := d.DecodeTo(len(out)); err == nil {
			t.Fatalf("a stream cut at %d of %d decoded without error", cut, len(z))
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := bytes.Clone(z)
		b[2+r.Intn(len(b)-2)] ^= byte(1 << r.Intn(8))
		out := make([]byte, len(data)+r.Intn(100)-50)
		if d, err := NewZlib(b, out); err == nil {
			d.DecodeTo(len(out))
		}
	}
	for _, size := range []int{len(data) - 1, len(data) + 1} {
		out := make([]byte, size)
		d, _ := NewZlib(z, out)
		if _, err := d.DecodeTo(size); !errors.Is(err, ErrShort) {
			t.Errorf("output of %d for a stream of %d: %v, want ErrShort", size, len(data), err)
		}
	}
}

func BenchmarkLibcDebugInfo(b *testing.B) {
	files, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug")
	var raw []byte
	var size uint64
	for _, p := range files {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		if s := f.Section(".debug_info"); s != nil && s.Flags&elf.SHF_COMPRESSED != 0 && s.Size > size {
			raw = make([]byte, s.FileSize)
			fh, _ := os.Open(p)
			fh.ReadAt(raw, int64(s.Offset))
			fh.Close()
			size = s.Size
		}
		f.Close()
	}
	if raw == nil {
		b.Skip("no compressed .debug_info")
	}
	out := make([]byte, size)
	b.Run("inflate", func(b *testing.B) {
		b.SetBytes(int64(size))
		for i := 0; i < b.N; i++ {
			d, _ := NewZlib(raw[24:], out)
			if _, err := d.DecodeTo(len(out)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("klauspost-zlib", func(b *testing.B) {
		b.SetBytes(int64(size))
		for i := 0; i < b.N; i++ {
			zr, _ := kzlib.NewReader(bytes.NewReader(raw[24:]))
			if _, err := io_ReadFull(zr, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compress-zlib", func(b *testing.B) {
		b.SetBytes(int64(size))
		for i := 0; i < b.N; i++ {
			zr, _ := zlib.NewReader(bytes.NewReader(raw[24:]))
			if _, err := io_ReadFull(zr, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
