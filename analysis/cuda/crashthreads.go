package cuda

import (
	"fmt"
	"sort"

	"github.com/faultline-dev/faultline/analysis/model"
)

// maxThreadRows bounds GPU.ThreadRows: one row per stop reason and pc.
const maxThreadRows = 64

// symbolizer resolves pcs against the dump's relocated images, once each.
type symbolizer struct {
	d     *CoreDump
	cache map[uint64]symbolized
}

type symbolized struct {
	loc Location
	img *Image
	ok  bool
}

func newSymbolizer(d *CoreDump) *symbolizer {
	return &symbolizer{d: d, cache: map[uint64]symbolized{}}
}

func (s *symbolizer) lookup(pc uint64) symbolized {
	if r, ok := s.cache[pc]; ok {
		return r
	}
	var r symbolized
	if pc != 0 {
		loc, img, err := s.d.Lookup(pc)
		r = symbolized{loc: loc, img: img, ok: err == nil}
	}
	s.cache[pc] = r
	return r
}

// function is the innermost function at pc, "" when no image holds it.
func (s *symbolizer) function(pc uint64) string {
	r := s.lookup(pc)
	if !r.ok {
		return ""
	}
	if len(r.loc.Frames) > 0 {
		return r.loc.Frames[0].Function
	}
	return r.loc.Function
}

// stopReason is a thread's stop as LLDB describes it.
func stopReason(t *Thread) string {
	switch {
	case t.Exception != 0:
		return "CUDA Exception: " + t.Exception.String()
	case t.Trap:
		return "trap"
	}
	return ""
}

// listThreads fills GPU.ThreadCount, Threads (those with a stop reason
// first, then the others, at most MaxListedGPUThreads, in the dump's
// order) and ThreadRows.
func listThreads(g *model.GPU, threads []Thread, sel int, sym *symbolizer) {
	g.ThreadCount = len(threads)
	pick := []int{sel}
	for pass := 0; pass < 2; pass++ {
		for i := range threads {
			if len(pick) == model.MaxListedGPUThreads {
				break
			}
			if i != sel && threads[i].HasStop() == (pass == 0) {
				pick = append(pick, i)
			}
		}
	}
	sort.Ints(pick)
	for _, i := range pick {
		g.Threads = append(g.Threads, gpuThread(&threads[i], i == sel, sym))
	}
	g.ThreadRows, g.ThreadRowsOmitted = threadRows(threads, sym)
}

// gpuThread is t in the model, with the inline levels at its pc.
func gpuThread(t *Thread, selected bool, sym *symbolizer) model.GPUThread {
	pc := t.PC()
	mt := model.GPUThread{Name: t.Name(), StandIn: t.StandIn(), Device: t.SM.Device, SM: int(t.SM.ID),
		PC: fmt.Sprintf("%#x", pc), StopReason: stopReason(t), ExceptionSource: string(t.Source),
		Function: sym.function(pc), Selected: selected}
	if t.Exception != 0 {
		mt.Exception = t.Exception.String()
	}
	if t.ErrorPCValid() {
		mt.ErrorPC = fmt.Sprintf("%#x", t.ErrorPC())
	}
	if r := sym.lookup(pc); r.ok {
		mt.Frames = locationFrames(mt.PC, pc, r.loc, r.img)
	}
	if !t.StandIn() {
		warp, lane := int(t.Warp.WarpID), int(t.Lane.Lane)
		mt.Warp, mt.Lane = &warp, &lane
		mt.Block = &model.Dim3{X: t.Warp.Block[0], Y: t.Warp.Block[1], Z: t.Warp.Block[2]}
		mt.Thread = &model.Dim3{X: t.Lane.Thread[0], Y: t.Lane.Thread[1], Z: t.Lane.Thread[2]}
	}
	return mt
}

// rowKey groups threads as LLDB's `thread list` aggregates them: by stop
// reason and place; stand-ins (no coordinates) never share a row with
// lanes (TestNVGPUArtificialSMException.
// test_stand_in_appears_in_aggregated_thread_list).
type rowKey struct {
	standIn bool
	stop    string
	pc      uint64
}

// threadRows aggregates every thread into rows: the rows of threads with
// a stop reason first, each group in order of first appearance; rows past
// maxThreadRows are counted, not listed.
func threadRows(threads []Thread, sym *symbolizer) (rows []model.GPUThreadRow, omitted int) {
	index := map[rowKey]int{}
	last := map[int]*Thread{}
	for pass := 0; pass < 2; pass++ {
		for i := range threads {
			t := &threads[i]
			if t.HasStop() != (pass == 0) {
				continue
			}
			k := rowKey{t.StandIn(), stopReason(t), t.PC()}
			ri, ok := index[k]
			if !ok {
				if len(rows) == maxThreadRows {
					omitted++
					continue
				}
				ri = len(rows)
				index[k] = ri
				rows = append(rows, model.GPUThreadRow{Label: t.Name(), StandIn: k.standIn, StopReason: k.stop,
					Function: sym.function(k.pc), PC: fmt.Sprintf("%#x", k.pc)})
			}
			rows[ri].Count++
			last[ri] = t
		}
	}
	for ri := range rows {
		if rows[ri].Count > 1 {
			rows[ri].Label = rowLabel(&rows[ri], last[ri])
		}
	}
	return rows, omitted
}

// rowLabel labels a row of several threads: "no kernel context" for
// stand-ins (TestNVGPUArtificialSMException.
// test_stand_ins_at_one_site_collapse_to_one_row), else the first and
// the last thread's coordinates.
func rowLabel(r *model.GPUThreadRow, last *Thread) string {
	if r.StandIn {
		return "no kernel context"
	}
	return r.Label + " … " + last.Name()
}
