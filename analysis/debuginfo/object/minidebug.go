package object

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz"
)

// maxMiniDebugInfo caps the decompressed size of .gnu_debugdata; real ones
// are symbol tables of a few MiB at most.
const maxMiniDebugInfo = 256 << 20

// MiniDebugInfo returns the ELF object embedded xz-compressed in the
// .gnu_debugdata section (GDB manual, "MiniDebugInfo"; Fedora and RHEL ship
// it in stripped binaries: a .symtab of the functions .dynsym lacks), or
// nil, nil when there is none. The xz stream is decoded by
// github.com/ulikunitz/xz (pure Go; the standard library has no xz) with
// its output capped at 256 MiB.
func (o *Object) MiniDebugInfo() (*Object, error) {
	o.mu.Lock()
	done, mini, err := o.miniDone, o.mini, o.miniErr
	o.mu.Unlock()
	if done {
		return mini, err
	}
	mini, err = o.readMiniDebugInfo()
	o.mu.Lock()
	o.miniDone, o.mini, o.miniErr = true, mini, err
	o.mu.Unlock()
	return mini, err
}

func (o *Object) readMiniDebugInfo() (obj *Object, err error) {
	s := o.Elf.Section(".gnu_debugdata")
	if s == nil {
		return nil, nil
	}
	raw := o.RawSection(s)
	if raw == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			obj, err = nil, &FormatError{Path: o.path, Format: ".gnu_debugdata", Off: int64(s.Offset), Msg: fmt.Sprintf("malformed xz data: %v", r)}
		}
	}()
	data, err := DecompressXZ(raw, maxMiniDebugInfo)
	if err != nil {
		return nil, &FormatError{Path: o.path, Format: ".gnu_debugdata", Off: int64(s.Offset), Msg: err.Error()}
	}
	return NewObjectFromBytes(o.path+"(.gnu_debugdata)", data)
}

// maxXZDict caps the LZMA2 dictionary an xz block may ask for: the decoder
// allocates it up front, so a hostile header could otherwise ask for GiBs.
// xz -9 uses 64 MiB.
const maxXZDict = 64 << 20

// DecompressXZ decodes an xz stream, failing past max bytes of output.
func DecompressXZ(b []byte, max int64) ([]byte, error) {
	if err := checkXZDicts(b, maxXZDict); err != nil {
		return nil, err
	}
	r, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	if n > max {
		return nil, errors.New("xz: decompressed data larger than the cap")
	}
	return out.Bytes(), nil
}

// checkXZDicts walks an xz stream's blocks through its index (The .xz File
// Format 1.1.0, §2.1.2 stream footer, §4 index, §3.1 block header, §5.3.1
// LZMA2 properties) and fails if a block's LZMA2 dictionary exceeds max, or
// the layout is not one stream of blocks the index describes.
func checkXZDicts(b []byte, max uint64) error {
	const hdr, footer = 12, 12
	if len(b) < hdr+footer || string(b[:6]) != "\xfd7zXZ\x00" {
		return errors.New("xz: not an xz stream")
	}
	f := b[len(b)-footer:]
	if string(f[10:]) != "YZ" {
		return errors.New("xz: no stream footer (concatenated or padded streams are not read)")
	}
	indexSize := (uint64(f[4]) | uint64(f[5])<<8 | uint64(f[6])<<16 | uint64(f[7])<<24 + 1) * 4
	if indexSize > uint64(len(b)-hdr-footer) {
		return errors.New("xz: index larger than the stream")
	}
	idx := b[len(b)-footer-int(indexSize) : len(b)-footer]
	vli := func(p []byte, i *int) (uint64, bool) {
		var v uint64
		for k := 0; k < 9 && *i < len(p); k++ {
			c := p[*i]
			*i++
			v |= uint64(c&0x7f) << (7 * k)
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	i := 1
	if len(idx) == 0 || idx[0] != 0 {
		return errors.New("xz: bad index indicator")
	}
	n, ok := vli(idx, &i)
	if !ok || n > uint64(len(idx)) {
		return errors.New("xz: bad index record count")
	}
	pos := uint64(hdr)
	for range n {
		unpadded, ok1 := vli(idx, &i)
		_, ok2 := vli(idx, &i)
		if !ok1 || !ok2 || pos >= uint64(len(b)) {
			return errors.New("xz: bad index record")
		}
		if err := checkXZBlockDict(b[pos:], max); err != nil {
			return err
		}
		pos += (unpadded + 3) &^ 3
		if pos < unpadded {
			return errors.New("xz: block size overflows")
		}
	}
	return nil
}

// checkXZBlockDict reads one block header's filter flags and checks the
// LZMA2 filter's dictionary size (encoded in one byte, §5.3.1).
func checkXZBlockDict(b []byte, max uint64) error {
	if len(b) < 2 || b[0] == 0 {
		return errors.New("xz: bad block header")
	}
	size := (int(b[0]) + 1) * 4
	if size > len(b) {
		return errors.New("xz: block header past the stream")
	}
	h := b[:size]
	flags := h[1]
	i := 2
	skipVLI := func() bool {
		for k := 0; k < 9 && i < len(h); k++ {
			c := h[i]
			i++
			if c&0x80 == 0 {
				return true
			}
		}
		return false
	}
	if flags&0x40 != 0 && !skipVLI() || flags&0x80 != 0 && !skipVLI() {
		return errors.New("xz: bad block sizes")
	}
	for range int(flags&3) + 1 {
		if i+2 > len(h) {
			return errors.New("xz: bad filter flags")
		}
		id, psize := h[i], int(h[i+1])
		i += 2
		if i+psize > len(h) {
			return errors.New("xz: filter properties past the header")
		}
		if id == 0x21 && psize == 1 { // LZMA2
			p := h[i]
			if p > 40 {
				return errors.New("xz: bad LZMA2 dictionary size")
			}
			dict := uint64(2|p&1) << (p/2 + 11)
			if p == 40 {
				dict = 0xffffffff
			}
			if dict > max {
				return fmt.Errorf("xz: LZMA2 dictionary of %d bytes is over the %d allowed", dict, max)
			}
		}
		i += psize
	}
	return nil
}
