// Package linemd5 reads the MD5 digests that DWARF 5 line-table headers
// give for their source files (DW_LNCT_MD5, DWARF 5 section 6.2.4.1), so
// that a checkout can be checked against the exact bytes a binary was
// compiled from. clang emits them; gcc 12 does not.
//
// Only the headers are read: the line programs are skipped. Every length
// and count comes from the file and is checked against the section before
// use; the number of entries read is capped.
package linemd5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
)

// File is one file entry of a line-table header with an MD5.
type File struct {
	// Path is the entry's name joined with its directory, and a relative
	// directory with directory 0 (the compilation directory).
	Path string
	MD5  [16]byte
}

// Sections are the ELF sections the headers refer to.
type Sections struct {
	Line, LineStr, Str []byte
}

// MaxFiles caps the file entries returned for one binary.
const MaxFiles = 1 << 20

// maxEntries caps the directory or file entries of one header.
const maxEntries = 1 << 20

// Content types and forms (DWARF 5 sections 6.2.4.1 and 7.5.6).
const (
	lnctPath     = 0x1
	lnctDirIndex = 0x2
	lnctMD5      = 0x5

	formBlock   = 0x09
	formBlock1  = 0x0a
	formData1   = 0x0b
	formData2   = 0x05
	formData4   = 0x06
	formData8   = 0x07
	formData16  = 0x1e
	formString  = 0x08
	formStrp    = 0x0e
	formLineStr = 0x1f
	formUdata   = 0x0f
	formSdata   = 0x0d
	formStrx    = 0x1a
	formStrx1   = 0x25
	formStrx2   = 0x26
	formStrx3   = 0x27
	formStrx4   = 0x28
)

// Read returns the files with an MD5 of every DWARF 5 unit in s.Line;
// units of earlier versions are skipped. A malformed unit ends the walk
// with an error naming its offset; the files read before it are returned.
func Read(s Sections, order binary.ByteOrder) ([]File, error) {
	var out []File
	off := 0
	for off < len(s.Line) {
		r := &reader{b: s.Line, off: off, order: order}
		next, files, err := readUnit(r, s)
		out = append(out, files...)
		if err != nil {
			return out, fmt.Errorf("line table at 0x%x: %w", off, err)
		}
		if len(out) > MaxFiles {
			return out[:MaxFiles], fmt.Errorf("more than %d files with an MD5", MaxFiles)
		}
		off = next
	}
	return out, nil
}

// format is one (content type, form) pair of an entry format.
type format struct{ lnct, form uint64 }

// readUnit reads one unit's header; next is the offset of the next unit.
func readUnit(r *reader, s Sections) (int, []File, error) {
	length := uint64(r.u32())
	dwarf64 := length == 0xffffffff
	if dwarf64 {
		length = r.u64()
	}
	start := r.off
	if r.err != nil || length > uint64(len(r.b)-start) {
		return 0, nil, errors.New("unit length runs past the section")
	}
	next := start + int(length)
	r.b = r.b[:next] // nothing of this unit reads past its end
	version := r.u16()
	if r.err != nil {
		return 0, nil, r.err
	}
	if version != 5 {
		return next, nil, nil
	}
	r.skip(2) // address_size, segment_selector_size
	if dwarf64 {
		r.skip(8)
	} else {
		r.skip(4)
	}
	r.skip(4) // minimum_instruction_length … line_range
	opcodeBase := int(r.u8())
	if opcodeBase > 0 {
		r.skip(opcodeBase - 1)
	}
	h := header{r: r, s: s, dwarf64: dwarf64}
	dirs, err := h.entries(nil)
	if err != nil {
		return 0, nil, fmt.Errorf("directories: %w", err)
	}
	files, err := h.entries(dirs)
	if err != nil {
		return 0, nil, fmt.Errorf("files: %w", err)
	}
	return next, files, nil
}

// header reads the entry tables of one header.
type header struct {
	r       *reader
	s       Sections
	dwarf64 bool
}

// entries reads an entry-format table and its entries: the directories
// when dirs is nil (their paths, returned as File without MD5), else the
// files, of which those with an MD5 are returned.
func (h *header) entries(dirs []File) ([]File, error) {
	r := h.r
	nfmt := int(r.u8())
	formats := make([]format, 0, nfmt)
	for range nfmt {
		formats = append(formats, format{r.uleb(), r.uleb()})
	}
	count := r.uleb()
	if r.err != nil {
		return nil, r.err
	}
	if count > maxEntries || count > uint64(r.remaining()) {
		return nil, fmt.Errorf("%d entries in a header of %d bytes", count, r.remaining())
	}
	var out []File
	for range count {
		e, err := h.entry(formats)
		if err != nil {
			return nil, err
		}
		if dirs == nil {
			out = append(out, File{Path: e.path})
			continue
		}
		if e.hasMD5 {
			out = append(out, File{Path: joinDir(dirs, e.dir, e.path), MD5: e.md5})
		}
	}
	return out, nil
}

// entry is one directory or file entry.
type entry struct {
	path   string
	dir    uint64
	md5    [16]byte
	hasMD5 bool
}

// entry reads one entry of the given formats.
func (h *header) entry(formats []format) (entry, error) {
	var e entry
	for _, f := range formats {
		v, err := h.value(f.form)
		if err != nil {
			return e, err
		}
		switch f.lnct {
		case lnctPath:
			e.path = v.str
		case lnctDirIndex:
			e.dir = v.num
		case lnctMD5:
			if len(v.block) == 16 {
				copy(e.md5[:], v.block)
				e.hasMD5 = true
			}
		}
	}
	return e, h.r.err
}

// value is one attribute value: a string, a number or a block.
type value struct {
	str   string
	num   uint64
	block []byte
}

// value reads one value of form.
func (h *header) value(form uint64) (value, error) {
	r := h.r
	var v value
	switch form {
	case formString:
		v.str = r.cstring()
	case formLineStr, formStrp:
		off := h.offset()
		sec := h.s.LineStr
		if form == formStrp {
			sec = h.s.Str
		}
		v.str = stringAt(sec, off)
	case formStrx, formUdata:
		v.num = r.uleb()
	case formSdata:
		v.num = uint64(r.sleb())
	case formStrx1, formData1:
		v.num = uint64(r.u8())
	case formStrx2, formData2:
		v.num = uint64(r.u16())
	case formStrx3:
		v.num = uint64(r.u16()) | uint64(r.u8())<<16
	case formStrx4, formData4:
		v.num = uint64(r.u32())
	case formData8:
		v.num = r.u64()
	case formData16:
		v.block = r.bytes(16)
	case formBlock:
		v.block = r.bytes(int(min(r.uleb(), uint64(r.remaining()+1))))
	case formBlock1:
		v.block = r.bytes(int(r.u8()))
	default:
		return v, fmt.Errorf("form 0x%x in an entry format", form)
	}
	return v, r.err
}

// offset reads a section offset (4 or 8 bytes).
func (h *header) offset() uint64 {
	if h.dwarf64 {
		return h.r.u64()
	}
	return uint64(h.r.u32())
}

// stringAt is the NUL-terminated string at off in sec ("" when off is out of range).
func stringAt(sec []byte, off uint64) string {
	if off >= uint64(len(sec)) {
		return ""
	}
	b := sec[off:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// joinDir joins a file name with its directory entry, and a relative
// directory with directory 0, the compilation directory.
func joinDir(dirs []File, idx uint64, name string) string {
	if path.IsAbs(name) || idx >= uint64(len(dirs)) {
		return name
	}
	dir := dirs[idx].Path
	if !path.IsAbs(dir) && idx != 0 && len(dirs) > 0 {
		dir = path.Join(dirs[0].Path, dir)
	}
	return path.Join(dir, name)
}
