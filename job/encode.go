package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Write prints s as one line of compact JSON of at most 64 KiB: when the
// full summary is larger it drops source positions, then the stacks with
// the fewest threads (never the crashed one), and says so in a problem.
func Write(w io.Writer, s *Summary) error {
	b, err := marshalCapped(s)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func marshalCapped(s *Summary) ([]byte, error) {
	b, err := marshal(s)
	if err != nil || len(b) <= maxSummaryBytes {
		return b, err
	}
	r := *s
	r.Frames = make([]FrameRef, len(s.Frames))
	for i, f := range s.Frames {
		r.Frames[i] = FrameRef{Function: f.Function, Module: f.Module, Language: f.Language}
	}
	r.Problems = append(append([]model.Problem(nil), s.Problems...),
		model.Problem{Message: fmt.Sprintf("summary over %d bytes: source lines left out", maxSummaryBytes)})
	if b, err = marshal(&r); err != nil || len(b) <= maxSummaryBytes {
		return b, err
	}
	stacks := append([]Stack(nil), s.Stacks...)
	sort.SliceStable(stacks, func(i, j int) bool {
		if stacks[i].Crashed != stacks[j].Crashed {
			return stacks[i].Crashed
		}
		return len(stacks[i].Threads) > len(stacks[j].Threads)
	})
	for n := len(stacks) / 2; n >= 1; n /= 2 {
		r.Stacks = stacks[:n]
		r.Problems[len(r.Problems)-1].Message = fmt.Sprintf(
			"summary over %d bytes: source lines and %d of %d call paths left out", maxSummaryBytes, len(stacks)-n, len(stacks))
		if b, err = marshal(&r); err != nil || len(b) <= maxSummaryBytes {
			return b, err
		}
	}
	return b, nil // one call path of 128 clipped names still fits; reached only in theory
}

func marshal(s *Summary) ([]byte, error) {
	if s.Frames == nil {
		s.Frames = []FrameRef{}
	}
	if s.Stacks == nil {
		s.Stacks = []Stack{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // C++ names are full of < and >
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
