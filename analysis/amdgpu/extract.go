package amdgpu

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxBundlesPerFile bounds the walk over a .hip_fatbin section: one
// bundle per translation unit, a few thousand in the largest ROCm libraries.
const maxBundlesPerFile = 1 << 16

// Image is one code object found in a file.
type Image struct {
	// Target is the processor and features, "gfx90a:xnack-" (from the
	// bundle entry's ID, or from the ELF header of a bare code object).
	Target string
	// Where says where it was found, "bundle 2 (compressed) at .hip_fatbin+0x2000".
	Where string
	Data  []byte
}

// Extract returns the AMD GPU code objects in data: data itself when it is
// a code object; every device entry of the offload bundles it holds when
// it is a bundle (plain or compressed), or a host ELF file (executable,
// shared library, object) with a .hip_fatbin section. Damaged bundles are
// described in problems, after the code objects that could be read.
func Extract(data []byte) (images []Image, problems []string, err error) {
	if isCodeObject(data) {
		return []Image{{Target: TargetFromFlags(elfFlags(data)), Where: "code object", Data: data}}, nil, nil
	}
	region, name := data, "file"
	if len(data) >= 4 && string(data[:4]) == elf.ELFMAG {
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, nil, err
		}
		s := f.Section(".hip_fatbin")
		if s == nil || s.Type == elf.SHT_NOBITS || s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
			return nil, nil, errors.New("no .hip_fatbin section: no HIP device code in this file")
		}
		region, name = data[s.Offset:s.Offset+s.Size], ".hip_fatbin"
	} else if !IsBundle(data) {
		return nil, nil, errors.New("not an AMD GPU code object, offload bundle or host ELF file")
	}
	images, problems = walkBundles(region, name)
	if len(images) == 0 {
		msg := "no AMD GPU code object in " + name
		if len(problems) > 0 {
			msg += ": " + problems[0]
		}
		return nil, problems, errors.New(msg)
	}
	return images, problems, nil
}

// walkBundles reads the bundles laid one after another in region (each
// aligned, zero padding between them).
func walkBundles(region []byte, name string) (images []Image, problems []string) {
	pos := 0
	budget := int64(DecompressBudget) // for all the region's compressed bundles
	for k := 1; k <= maxBundlesPerFile && pos < len(region); k++ {
		start := nextBundle(region, pos)
		if start < 0 {
			break
		}
		raw, used, compressed := region[start:], 0, false
		var err error
		if bytes.HasPrefix(raw, []byte(ccobMagic)) {
			compressed = true
			raw, used, err = DecompressBundle(raw, &budget)
			if err != nil {
				problems = append(problems, fmt.Sprintf("bundle %d at %s+%#x: %v", k, name, start, err))
				pos = start + len(ccobMagic)
				continue
			}
		}
		entries, end, err := ParseBundle(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("bundle %d at %s+%#x: %v", k, name, start, err))
		}
		if !compressed {
			used = end
		}
		where := fmt.Sprintf("bundle %d at %s+%#x", k, name, start)
		if compressed {
			where = fmt.Sprintf("bundle %d (compressed) at %s+%#x", k, name, start)
		}
		images = append(images, deviceImages(entries, where, &problems)...)
		pos = start + max(used, len(bundleMagic))
	}
	return images, problems
}

// nextBundle is the offset of the next bundle magic at or after pos, -1 if none.
func nextBundle(region []byte, pos int) int {
	a := bytes.Index(region[pos:], []byte(bundleMagic))
	b := bytes.Index(region[pos:], []byte(ccobMagic))
	switch {
	case a < 0 && b < 0:
		return -1
	case a < 0 || (b >= 0 && b < a):
		return pos + b
	default:
		return pos + a
	}
}

func deviceImages(entries []BundleEntry, where string, problems *[]string) []Image {
	var out []Image
	for _, e := range entries {
		if !e.Device() || len(e.Data) == 0 {
			continue
		}
		if !isCodeObject(e.Data) {
			*problems = append(*problems, fmt.Sprintf("%s: entry %q is not an AMD GPU code object", where, e.ID))
			continue
		}
		out = append(out, Image{Target: e.Target(), Where: where + " entry " + e.ID, Data: e.Data})
	}
	return out
}

// elfFlags is e_flags of a little-endian ELF64 header (debug/elf does
// not expose it).
func elfFlags(data []byte) uint32 {
	if len(data) < 52 || data[elf.EI_CLASS] != byte(elf.ELFCLASS64) {
		return 0
	}
	return binary.LittleEndian.Uint32(data[48:])
}

// isCodeObject reports whether data is an ELF file for EM_AMDGPU.
func isCodeObject(data []byte) bool {
	if len(data) < 20 || string(data[:4]) != elf.ELFMAG {
		return false
	}
	// e_machine at 18, in the file's byte order (code objects are little-endian).
	return data[elf.EI_DATA] == byte(elf.ELFDATA2LSB) && elf.Machine(uint16(data[18])|uint16(data[19])<<8) == elf.EM_AMDGPU
}
