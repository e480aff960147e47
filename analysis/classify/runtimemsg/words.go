package runtimemsg

import (
	"strconv"
	"strings"
)

// Le64 is the little-endian word at the start of b.
func Le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// ParseHex parses a hexadecimal number, with or without its "0x".
func ParseHex(s string) (uint64, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(s, 16, 64)
	return v, err == nil
}

// NullLimit is the size of the unmapped region at address zero (Linux's
// default vm.mmap_min_addr, 64 KiB): a fault below it is a NULL pointer plus
// a field offset.
const NullLimit = 0x10000

// Canonical reports whether addr is a canonical x86-64 (48-bit) address.
func Canonical(addr uint64) bool {
	top := addr >> 47
	return top == 0 || top == 1<<17-1
}

// OrDefault is s, or d when s is empty.
func OrDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
