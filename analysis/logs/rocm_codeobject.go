package logs

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/faultline-dev/faultline/analysis/amdgpu"
	"github.com/faultline-dev/faultline/analysis/model"
)

// maxCodeObjectBytes caps the code object read out of a file a ROCm URI names.
const maxCodeObjectBytes = 1 << 30

// codeObjectChain resolves a load offset in the code object a ROCm code
// object URI names ("file:///app/libk.so#offset=16384&size=8808", the
// debug agent's and rocgdb's spelling) to its inline chain, innermost
// first, and the code object's target ("gfx90a"), when that file is on
// this machine; nothing when it is not.
func codeObjectChain(uri string, off uint64) ([]model.Frame, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, "", nil // memory:// objects live only in the process
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, "", nil
	}
	defer f.Close()
	q, _ := url.ParseQuery(u.Fragment)
	start, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	size, _ := strconv.ParseInt(q.Get("size"), 10, 64)
	if size <= 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, "", err
		}
		size = st.Size() - start
	}
	if start < 0 || size <= 0 || size > maxCodeObjectBytes {
		return nil, "", fmt.Errorf("%s: offset %d size %d out of range", uri, start, size)
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
