package logs

import (
	"errors"
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/analysis/model"
)

// ReadGDBCrash reads a pasted gdb session (`bt`, `thread apply all bt`,
// `info threads`) into the model: the frames as gdb printed them, the
// current thread crashed. Nothing is unwound, so frames carry no trust.
func ReadGDBCrash(path string, open func() (io.ReadCloser, error)) (*model.Crash, bool, error) {
	r, err := open()
	if err != nil {
		return nil, false, err
	}
	gl, err := ParseGDB(r)
	r.Close()
	if errors.Is(err, ErrNotGDBLog) {
		return nil, false, nil
	}
	var problems []model.Problem
	if errors.Is(err, ErrLimit) {
		problems = append(problems, model.Problem{Message: "the gdb log is larger than faultline reads: " + err.Error()})
	} else if err != nil {
		return nil, false, err
	}
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: "gdb-log", Command: gl.Command}, Threads: []model.Thread{},
		Modules: []model.Module{}, Problems: append([]model.Problem{}, problems...)}
	if gl.Signal != "" {
		if n, ok := model.SignalNumber(gl.Signal); ok {
			c.Signal = &model.Signal{Number: n, Name: gl.Signal}
		}
	}
	current := gl.CurrentThread
	if current == 0 && len(gl.Threads) > 0 {
		current = gl.Threads[0].Num // gdb selects the signalled thread of a core first
	}
	for _, gt := range gl.Threads {
		id := gt.LWP
		if id == 0 {
			id = gt.Num
		}
		th := model.Thread{ID: id, Name: gt.Name, Crashed: gt.Num == current && c.Signal != nil, Truncated: gt.Stopped}
		for _, gf := range gt.Frames {
			f := model.Frame{Index: len(th.Frames), Function: gf.Function, File: gf.File, Line: gf.Line, Module: gf.Library}
			if gf.Signal {
				f.Function, f.Signal = model.SignalFrameName, true
			}
			if gf.HasPC {
				f.Addr, f.PC = gf.PC, fmt.Sprintf("%#x", gf.PC)
			}
			// gdb prints the pc on the innermost level of a physical frame
			// only: a frame without one is an outer level of the frame
			// before it, which therefore was inlined into it.
			if n := len(th.Frames); n > 0 && !gf.HasPC && !gf.Signal && !th.Frames[n-1].Signal {
				th.Frames[n-1].Inlined = true
				f.PC, f.Addr = th.Frames[n-1].PC, th.Frames[n-1].Addr
			}
			if f.Function == "??" {
				f.Function = ""
			}
			th.Frames = append(th.Frames, f)
		}
		if gt.MoreFrames && th.Truncated == "" {
			th.Truncated = "the log ends with \"(More stack frames follow...)\""
		}
		if th.Crashed {
			c.CrashingThreadID = th.ID
		}
		c.Threads = append(c.Threads, th)
	}
	if len(c.Threads) == 0 {
		return nil, false, nil
	}
	return c, true, nil
}
