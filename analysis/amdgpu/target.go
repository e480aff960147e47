package amdgpu

import "fmt"

// ELF e_flags of code objects (LLVM's AMDGPUUsage, code object v4+):
// the processor in the low byte, xnack and sramecc settings above it.
const (
	efMachMask    = 0x0ff
	efXnackMask   = 0x300
	efSrameccMask = 0xc00
)

// machNames maps EF_AMDGPU_MACH values to processor names.
var machNames = map[uint32]string{
	0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701", 0x024: "gfx702",
	0x025: "gfx703", 0x026: "gfx704", 0x028: "gfx801", 0x029: "gfx802", 0x02a: "gfx803",
	0x02b: "gfx810", 0x02c: "gfx900", 0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906",
	0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c", 0x033: "gfx1010", 0x034: "gfx1011",
	0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032", 0x039: "gfx1033",
	0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805", 0x03d: "gfx1035", 0x03e: "gfx1034",
	0x03f: "gfx90a", 0x040: "gfx940", 0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150",
	0x044: "gfx1103", 0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
	0x04a: "gfx1151", 0x04b: "gfx941", 0x04c: "gfx942", 0x04e: "gfx1201", 0x04f: "gfx950",
}

// TargetFromFlags names the processor and features of a code object from
// its ELF header flags, the way bundle IDs spell them ("gfx90a",
// "gfx90a:xnack-", "gfx942:sramecc+:xnack+"); "any" settings are omitted.
func TargetFromFlags(flags uint32) string {
	name, ok := machNames[flags&efMachMask]
	if !ok {
		name = fmt.Sprintf("amdgcn-mach-%#x", flags&efMachMask)
	}
	// v4 encodings: 0 unsupported, 0x100 any, 0x200 off, 0x300 on.
	switch flags & efSrameccMask {
	case 0x800:
		name += ":sramecc-"
	case 0xc00:
		name += ":sramecc+"
	}
	switch flags & efXnackMask {
	case 0x200:
		name += ":xnack-"
	case 0x300:
		name += ":xnack+"
	}
	return name
}

// Processor is the target without features ("gfx90a" for "gfx90a:xnack-").
func Processor(target string) string {
	for i := 0; i < len(target); i++ {
		if target[i] == ':' {
			return target[:i]
		}
	}
	return target
}
