package cuda

import "fmt"

// Global and managed memory sections (cudacoredump.h "Global memory":
// raw bytes at the section's sh_addr, linked to nothing).
const (
	shtManagedMem = shtLoUser + 1
	shtGlobalMem  = shtLoUser + 2
)

// ReadGlobal reads global (or managed) memory the dump saved at addr into
// b, as far as one saved region holds it contiguously. A region whose
// bytes lie past the end of the file was dropped when the dump was read
// and reads as absent (TestNVGPUArtificialMalformed.
// test_truncated_leaf_is_skipped: "core file does not contain").
func (d *CoreDump) ReadGlobal(addr uint64, b []byte) (int, error) {
	if d.f != nil {
		for i := range d.f.sections {
			s := &d.f.sections[i]
			if (s.Type != shtGlobalMem && s.Type != shtManagedMem) || addr < s.Addr || addr-s.Addr >= s.Size {
				continue
			}
			data, err := d.f.sectionData(s)
			if err != nil {
				continue
			}
			return copy(b, data[addr-s.Addr:]), nil
		}
	}
	return 0, fmt.Errorf("the GPU core dump does not contain %#x", addr)
}
