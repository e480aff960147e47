package moduleorigin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// ntFDOPackagingMetadata is the note type of .note.package, owner "FDO"
// (https://systemd.io/ELF_PACKAGE_METADATA/).
const ntFDOPackagingMetadata = 0xcafe1a7e

// maxNoteSection caps the note data read from one ELF file.
const maxNoteSection = 1 << 20

// PackageNote is the FDO packaging metadata of an ELF object. Type, Name
// and Version are the spec's required keys; Repository and Commit are the
// optional keys that let gitsrc fetch the exact source.
type PackageNote struct {
	Type         string `json:"type"`
	OS           string `json:"os,omitempty"`
	OSVersion    string `json:"osVersion,omitempty"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	Architecture string `json:"architecture,omitempty"`
	Repository   string `json:"repository,omitempty"`
	Commit       string `json:"commit,omitempty"`
	DebugInfoURL string `json:"debugInfoUrl,omitempty"`
}

// ReadPackageNote reads the .note.package metadata of the ELF file at path.
// It returns nil and no error when the file has none.
func ReadPackageNote(path string) (*PackageNote, error) {
	rf, _, err := regular.Open(path) // a module's path comes from the core
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	f, err := elf.NewFile(rf)
	if err != nil {
		return nil, err
	}
	var data []byte
	if s := f.Section(".note.package"); s != nil && s.Type == elf.SHT_NOTE {
		data, err = readCapped(s.Open(), s.Size)
		if err != nil {
			return nil, fmt.Errorf("%s: .note.package: %w", path, err)
		}
		if n, err := parsePackageNotes(data, f.ByteOrder); n != nil || err != nil {
			return n, err
		}
	}
	// Stripped files may keep the note only in a PT_NOTE segment.
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := readCapped(p.Open(), p.Filesz)
		if err != nil {
			continue
		}
		if n, err := parsePackageNotes(data, f.ByteOrder); n != nil || err != nil {
			return n, err
		}
	}
	return nil, nil
}

func readCapped(r io.Reader, size uint64) ([]byte, error) {
	if size > maxNoteSection {
		return nil, fmt.Errorf("note data of %d bytes is over %d", size, maxNoteSection)
	}
	return io.ReadAll(io.LimitReader(r, int64(size)))
}

// parsePackageNotes walks ELF notes (namesz, descsz, type, name, desc, each
// padded to 4 bytes; ELF gABI "Note Section") and decodes the first FDO
// packaging metadata note. Malformed notes are errors, never panics.
func parsePackageNotes(b []byte, bo binary.ByteOrder) (*PackageNote, error) {
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align4(namesz)
		if nameEnd > uint64(len(b)) {
			return nil, errors.New("note name runs past the section")
		}
		name := b[:namesz]
		b = b[nameEnd:]
		descEnd := align4(descsz)
		if descEnd > uint64(len(b)) {
			if descsz > uint64(len(b)) {
				return nil, errors.New("note descriptor runs past the section")
			}
			descEnd = uint64(len(b))
		}
		desc := b[:descsz]
		b = b[descEnd:]
		if typ != ntFDOPackagingMetadata || string(bytes.TrimRight(name, "\x00")) != "FDO" {
			continue
		}
		desc = bytes.TrimRight(desc, "\x00")
		var n PackageNote
		if err := json.Unmarshal(desc, &n); err != nil {
			return nil, fmt.Errorf("package metadata note: %w", err)
		}
		return &n, nil
	}
	return nil, nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }
