// Package object opens the ELF files behind the modules of a core dump (a
// binary, a shared library or a separate debug file) and hands out their
// sections: files are mapped read-only with mmap and sections are slices of
// the mapping; only SHF_COMPRESSED (and .zdebug) sections are decompressed,
// once, on demand, under a size cap, and large ones are kept in the
// persistent index cache (indexcache). It also reads what identifies a file
// (the build-id note, .gnu_debuglink), the MiniDebugInfo object embedded in
// .gnu_debugdata, and stores CFI indexes for analysis/unwind/frame.
//
// It is the bottom layer of analysis/debuginfo: it imports no other package
// of it but indexcache (internal/archtest).
package object
