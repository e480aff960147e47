package dwarfform

// StringAt returns the NUL-terminated string at off in a string section.
func StringAt(sec []byte, off uint64) (string, bool) {
	if off >= uint64(len(sec)) {
		return "", false
	}
	b := sec[off:]
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i]), true
		}
	}
	return "", false
}
