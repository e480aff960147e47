package linemd5

import (
	"debug/elf"
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// MaxSection caps each DWARF section read from a file.
const MaxSection = 512 << 20

// ReadELF reads the file MD5s of the DWARF 5 line tables of an ELF file
// (a binary or its separate debug file). A file without .debug_line has
// none and no error.
func ReadELF(path string) ([]File, error) {
	rf, _, err := regular.Open(path) // a module's path comes from the core
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	f, err := elf.NewFile(rf)
	if err != nil {
		return nil, err
	}
	var s Sections
	for _, sec := range []struct {
		name string
		dst  *[]byte
	}{{".debug_line", &s.Line}, {".debug_line_str", &s.LineStr}, {".debug_str", &s.Str}} {
		if *sec.dst, err = section(f, sec.name); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.Line == nil {
		return nil, nil
	}
	files, err := Read(s, f.ByteOrder)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return files, err
}

// section reads one section (decompressed), nil when absent.
func section(f *elf.File, name string) ([]byte, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > MaxSection {
		return nil, fmt.Errorf("%s of %d bytes is over %d", name, s.Size, MaxSection)
	}
	b, err := io.ReadAll(io.LimitReader(s.Open(), MaxSection))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}
