package elfcore

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// archNames name the architectures of cores, as their users call them.
var archNames = map[elf.Machine]string{
	elf.EM_386: "i386", elf.EM_PPC: "PowerPC", elf.EM_PPC64: "PowerPC64", elf.EM_S390: "s390",
	elf.EM_SPARC: "SPARC", elf.EM_SPARCV9: "SPARC64", elf.EM_ARM: "ARM", elf.EM_MIPS: "MIPS",
	elf.EM_RISCV: "RISC-V", elf.EM_LOONGARCH: "LoongArch", elf.EM_68K: "m68k", elf.EM_X86_64: "x86-64",
	elf.EM_AARCH64: "aarch64",
}

// archOf describes the architecture of the ELF header in d (at least
// EI_NIDENT bytes) for an "unsupported" error: "a 32-bit i386 core".
func archOf(d []byte) string {
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(d[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	bits := "64-bit"
	if elf.Class(d[elf.EI_CLASS]) == elf.ELFCLASS32 {
		bits = "32-bit"
	}
	name := "an unknown architecture"
	if len(d) >= 20 {
		m := elf.Machine(order.Uint16(d[18:20]))
		name = archNames[m]
		switch {
		case m == elf.EM_X86_64 && bits == "32-bit":
			name = "x32 (the x86-64 ILP32 ABI)"
		case m == elf.EM_S390 && bits == "64-bit":
			name = "s390x"
		case name == "":
			name = m.String()
		}
	}
	return fmt.Sprintf("a %s %s core; faultline reads x86-64, aarch64 and i386 cores only", bits, name)
}
