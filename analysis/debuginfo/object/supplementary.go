package object

import (
	"bytes"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// maxSupName caps the file name a supplementary link may give (PATH_MAX).
const maxSupName = 4096

// SupplementaryLink names the supplementary object file (a dwz multifile)
// that holds DIEs and strings this file's DWARF refers to, and the id it
// must have: from .gnu_debugaltlink (the GNU extension dwz writes by
// default: the file name, NUL, the multifile's build-id) or from .debug_sup
// (DWARF 5 §7.3.6: version, is_supplementary 0, the file name, and the
// supplementary file's checksum). ok is false when the file names none.
func (o *Object) SupplementaryLink() (name string, id []byte, ok bool) {
	if d, _, found := o.Section(".gnu_debugaltlink"); found {
		i := bytes.IndexByte(d, 0)
		if i <= 0 || i > maxSupName {
			return "", nil, false
		}
		return string(d[:i]), bytes.Clone(d[i+1:]), true
	}
	isSup, name, sum, ok := o.debugSup()
	if !ok || isSup || name == "" {
		return "", nil, false
	}
	return name, sum, true
}

// SupplementaryID is what a file that is a supplementary file is known by:
// the checksum its .debug_sup gives itself (DWARF 5, is_supplementary 1),
// else its build-id (the GNU multifile).
func (o *Object) SupplementaryID() []byte {
	if isSup, _, sum, ok := o.debugSup(); ok && isSup {
		return sum
	}
	return o.BuildID()
}

// debugSup reads .debug_sup (DWARF 5 §7.3.6).
func (o *Object) debugSup() (isSup bool, name string, checksum []byte, ok bool) {
	d, _, found := o.Section(".debug_sup")
	if !found {
		return false, "", nil, false
	}
	c := &cursor.Cursor{Format: ".debug_sup", Data: d, Order: o.Elf.ByteOrder}
	version := c.U16()
	sup := c.U8()
	name = c.CString()
	n := c.ULEB128()
	sum := c.Bytes(int(min(n, uint64(c.Len()))))
	if c.Err() != nil || version != 5 || sup > 1 || len(name) > maxSupName {
		return false, "", nil, false
	}
	return sup == 1, name, bytes.Clone(sum), true
}
