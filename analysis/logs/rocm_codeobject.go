package logs

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/faultline-dev/faultline/analysis/amdgpu"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// maxCodeObjectBytes caps the code object read out of a file a ROCm URI
// names (one device code object, or the bundle holding it): what is read
// is also what a compressed bundle's budget (amdgpu.DecompressBudget) may
// then expand.
const maxCodeObjectBytes = 64 << 20

// codeObjectChain resolves a load offset in the code object a ROCm code
// object URI names ("file:///app/libk.so#offset=16384&size=8808", the
// debug agent's and rocgdb's spelling) to its inline chain, innermost
// first, and the code object's target ("gfx90a"), when that file is on
// this machine; nothing when it is not. The path comes from a log: only a
// regular file is read (regular.Open), and only the part of it that the
// file's size, as fstat gives it, holds.
func codeObjectChain(uri string, off uint64) ([]model.Frame, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, "", nil // memory:// objects live only in the process
	}
	f, st, err := regular.Open(u.Path)
	var nr *regular.NotRegularError
	if errors.As(err, &nr) {
		return nil, "", fmt.Errorf("%s: %w", uri, err)
	} else if err != nil {
		return nil, "", nil // not on this machine
	}
	defer f.Close()
	q, _ := url.ParseQuery(u.Fragment)
	start, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	size, _ := strconv.ParseInt(q.Get("size"), 10, 64)
	if start < 0 || start >= st.Size() {
		return nil, "", fmt.Errorf("%s: offset %d outside the file (%d bytes)", uri, start, st.Size())
	}
	if size <= 0 || size > st.Size()-start {
		size = st.Size() - start // no size, or more than the file holds: to the end of the file
	}
	if size > maxCodeObjectBytes {
		return nil, "", fmt.Errorf("%s: a %d-byte code object, over the %d-byte limit", uri, size, maxCodeObjectBytes)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, start, size), data); err != nil {
		return nil, "", fmt.Errorf("%s: %w", uri, err)
	}
	images, _, err := amdgpu.Extract(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", uri, err)
	}
	co, err := amdgpu.Open(images[0])
	if err != nil {
		return nil, "", err
	}
	loc, err := co.Lookup(off)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", uri, err)
	}
	var out []model.Frame
	for i, fr := range loc.Frames {
		out = append(out, model.Frame{Index: i, Function: fr.Function, File: fr.File, Line: fr.Line, Column: fr.Column,
			Inlined: i < len(loc.Frames)-1, Trust: model.TrustContext})
	}
	return out, co.Target, nil
}
