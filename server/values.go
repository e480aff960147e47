package server

import "github.com/faultline-dev/faultline/analysis"

// Value is an argument or local variable of a frame, as a debugger prints it.
type Value struct {
	Name string
	Type string // C/C++ spelling, e.g. "const Node *"; "" when unknown
	// Text is the value ("0x0", "42"), or "<optimized out>" when its DWARF
	// location does not cover the frame's pc.
	Text     string
	Argument bool
}

// ValueReader reads the arguments and locals of a frame from the dump:
// DWARF location expressions and location lists (DWARF 5 §2.5, §2.6)
// evaluated against the frame's recovered registers (Frame.Regs), its CFA
// (DW_OP_call_frame_cfa as frame base), stack memory, and entry values
// (DW_OP_entry_value, §2.5.1.7) where the caller's registers allow.
//
// The analysis engine owns DWARF; the server only shows what a ValueReader
// returns (hovers, inlay hints). Options.Values supplies one per session.
type ValueReader interface {
	FrameValues(thread, frame int) ([]Value, error)
}

// SessionValues is the ValueReader of an analysis session: the values
// analysis.Session.FrameValues reads from the dump's DWARF and memory. It
// is what `faultline serve` puts in Options.Values.
func SessionValues(s *analysis.Session) ValueReader { return sessionValues{s} }

type sessionValues struct{ s *analysis.Session }

func (v sessionValues) FrameValues(thread, frame int) ([]Value, error) {
	vals, err := v.s.FrameValues(thread, frame)
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(vals))
	for i, x := range vals {
		out[i] = Value{Name: x.Name, Type: x.Type, Text: x.Text, Argument: x.Argument}
	}
	return out, nil
}
