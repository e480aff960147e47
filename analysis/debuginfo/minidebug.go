package debuginfo

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz"
)

// maxMiniDebugInfo caps the decompressed size of .gnu_debugdata; real ones
// are symbol tables of a few MiB at most.
const maxMiniDebugInfo = 256 << 20

// MiniDebugInfo returns the ELF object embedded xz-compressed in the
// .gnu_debugdata section (GDB manual, "MiniDebugInfo"; Fedora and RHEL ship
// it in stripped binaries: a .symtab of the functions .dynsym lacks), or
// nil, nil when there is none. The xz stream is decoded by
// github.com/ulikunitz/xz (pure Go; the standard library has no xz) with
// its output capped at 256 MiB.
func (o *Object) MiniDebugInfo() (*Object, error) {
	o.mu.Lock()
	done, mini, err := o.miniDone, o.mini, o.miniErr
	o.mu.Unlock()
	if done {
		return mini, err
	}
	mini, err = o.readMiniDebugInfo()
	o.mu.Lock()
	o.miniDone, o.mini, o.miniErr = true, mini, err
	o.mu.Unlock()
	return mini, err
}

func (o *Object) readMiniDebugInfo() (obj *Object, err error) {
	s := o.elf.Section(".gnu_debugdata")
	if s == nil {
		return nil, nil
	}
	raw := o.rawSection(s)
	if raw == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			obj, err = nil, &FormatError{Path: o.path, Section: ".gnu_debugdata", Off: int64(s.Offset), Msg: fmt.Sprintf("malformed xz data: %v", r)}
		}
	}()
	data, err := decompressXZ(raw, maxMiniDebugInfo)
	if err != nil {
		return nil, &FormatError{Path: o.path, Section: ".gnu_debugdata", Off: int64(s.Offset), Msg: err.Error()}
	}
	return NewObjectFromBytes(o.path+"(.gnu_debugdata)", data)
}

// decompressXZ decodes an xz stream, failing past max bytes of output.
func decompressXZ(b []byte, max int64) ([]byte, error) {
	r, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	if n > max {
		return nil, errors.New("xz: decompressed data larger than the cap")
	}
	return out.Bytes(), nil
}
