package cuda

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// Fatbin layout, as nvcc 11.x and 12.x write it into a host object's
// .nv_fatbin section (cuobjdump --list-elf lists the same entries):
//
//	header: u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries
//	entry:  u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload size,
//	        ..., u32 SM version at 0x1c, ..., u64 flags at 0x28 (0x2000: compressed),
//	        ..., u64 uncompressed size at 0x38; the payload follows the entry header.
const (
	fatbinMagic          = 0xBA55ED50
	fatbinKindELF        = 2
	fatbinFlagCompressed = 0x2000
	maxFatbinEntries     = 1 << 16
)

// EmbeddedCubin is one cubin found in a fatbin.
type EmbeddedCubin struct {
	Arch   string // "sm_90"
	Offset int64  // of the payload in the file
	Data   []byte
}

// ExtractCubins returns the cubins embedded in data: data itself when it
// is a cubin, else every uncompressed ELF entry of the fatbins it holds
// (an executable, shared library or object built by nvcc, or a bare
// .fatbin). Compressed entries are reported in the error, after the
// cubins that could be read.
func ExtractCubins(data []byte) ([]EmbeddedCubin, error) {
	if IsCubin(data) {
		c, err := ParseCubin(data)
		if err != nil {
			return nil, err
		}
		return []EmbeddedCubin{{Arch: c.Arch(), Data: data}}, nil
	}
	region, base := data, int64(0)
	if f, err := elf.NewFile(bytes.NewReader(data)); err == nil {
		// Search the fatbin sections only: host code may contain the
		// magic number as a constant.
		var found bool
		for _, name := range []string{".nv_fatbin", "__nv_relfatbin"} {
			if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Offset+s.Size <= uint64(len(data)) {
				region, base, found = data[s.Offset:s.Offset+s.Size], int64(s.Offset), true
				break
			}
		}
		if !found {
			return nil, errors.New("no .nv_fatbin section: not built by nvcc, or its GPU code is elsewhere")
		}
	}
	var out []EmbeddedCubin
	var compressed int
	for off := 0; off+16 <= len(region); off += 8 {
		if le.Uint32(region[off:]) != fatbinMagic {
			continue
		}
		hs := int(le.Uint16(region[off+6:]))
		size := le.Uint64(region[off+8:])
		if hs < 16 || size > uint64(len(region)-off-hs) {
			continue
		}
		entries := region[off+hs : off+hs+int(size)]
		for e, n := 0, 0; e+0x40 <= len(entries) && n < maxFatbinEntries; n++ {
			kind := le.Uint16(entries[e:])
			ehs := uint64(le.Uint32(entries[e+4:]))
			psize := le.Uint64(entries[e+8:])
			if ehs < 0x40 || ehs > uint64(len(entries)-e) || psize > uint64(len(entries)-e)-ehs {
				break
			}
			flags := le.Uint64(entries[e+0x28:])
			sm := le.Uint32(entries[e+0x1c:])
			payload := entries[e+int(ehs) : e+int(ehs)+int(psize)]
			switch {
			case kind != fatbinKindELF:
			case flags&fatbinFlagCompressed != 0:
				compressed++
			case IsCubin(payload):
				out = append(out, EmbeddedCubin{Arch: fmt.Sprintf("sm_%d", sm), Data: payload,
					Offset: base + int64(off+hs+e) + int64(ehs)})
			}
			e += int(ehs) + int(psize)
		}
		off += hs + int(size) - 8
	}
	var err error
	switch {
	case compressed > 0:
		err = fmt.Errorf("%d compressed cubin(s) skipped (built with -Xfatbin=-compress-all); extract them with cuobjdump -xelf all", compressed)
	case len(out) == 0:
		err = errors.New("no cubins in the fatbin (PTX only?)")
	}
	return out, err
}

// maxFatbinHost bounds a file searched for embedded cubins (libtorch_cuda
// is about 1.2 GiB).
const maxFatbinHost = 4 << 30

// OpenCubins reads the cubins in a cubin file, or embedded in an
// executable, shared library or object: a regular file of at most
// maxFatbinHost bytes.
func OpenCubins(path string) ([]*Cubin, []string, error) {
	data, err := regular.ReadFile(path, maxFatbinHost)
	if err != nil {
		return nil, nil, err
	}
	emb, err := ExtractCubins(data)
	if len(emb) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	var cubins []*Cubin
	for _, e := range emb {
		c, err := ParseCubin(e.Data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("cubin at offset %#x: %v", e.Offset, err))
			continue
		}
		cubins = append(cubins, c)
	}
	if len(cubins) == 0 {
		return nil, problems, fmt.Errorf("%s: no readable cubin", path)
	}
	return cubins, problems, nil
}
