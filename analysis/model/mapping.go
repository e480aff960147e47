package model

// Mapping is one region of the crashed process's address space, as a
// core's program headers (PT_LOAD: address range and permissions) and
// NT_FILE (the file mapped there) record it. It is not part of the JSON
// model: classification asks the dump for it (a write to read-only data,
// a call into code that is no longer mapped).
type Mapping struct {
	Lo, Hi uint64
	// Perm is "r", "w" and "x" or "-" each, as /proc/PID/maps writes them
	// ("r-x", "rw-", "r--", "---").
	Perm string
	// File is the mapped file's path, "" for anonymous memory.
	File string
	// Section is the ELF section of File holding the address (".rodata",
	// ".text", ".data.rel.ro"), when the file is at hand.
	Section string
}

// Writable reports whether the mapping allows writes.
func (m Mapping) Writable() bool { return len(m.Perm) == 3 && m.Perm[1] == 'w' }
