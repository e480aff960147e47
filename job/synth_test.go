package job

import (
	"time"

	"github.com/faultline-dev/faultline/analysis/model"
)

// synthRank builds a rank summary: paths are call paths innermost first,
// each held by the thread count in threads (thread ids from pid on, so
// the first path is the main thread's).
func synthRank(rank int, host string, paths [][]string, threads []int) *Summary {
	s := &Summary{Schema: SummarySchema}
	r := rank
	s.Job = Info{Hostname: host, Rank: &r, PID: 1000 + rank, Source: "live"}
	s.Dump.PID = 1000 + rank
	index := map[string]int{}
	tid := s.Dump.PID
	for i, p := range paths {
		st := Stack{}
		for _, fn := range p {
			j, ok := index[fn]
			if !ok {
				j = len(s.Frames)
				index[fn] = j
				s.Frames = append(s.Frames, FrameRef{Function: fn, File: fn + ".c", Line: 10 + j})
			}
			st.Frames = append(st.Frames, j)
		}
		for k := 0; k < threads[i]; k++ {
			st.Threads = append(st.Threads, tid)
			tid++
		}
		s.ThreadCount += threads[i]
		s.Stacks = append(s.Stacks, st)
	}
	return s
}

// crashed marks s as having crashed with signature sig at time at.
func crashed(s *Summary, sig string, at time.Time) *Summary {
	s.Signal = &model.Signal{Number: 11, Name: "SIGSEGV"}
	s.Crash = &CrashBrief{Kind: "null-deref", Signature: sig}
	s.Stacks[0].Crashed = true
	s.CrashingThread = s.Stacks[0].Threads[0]
	s.Job.Time = at
	s.Job.Source = "core"
	return s
}

func loaded(sums ...*Summary) []Loaded {
	out := make([]Loaded, len(sums))
	for i, s := range sums {
		out[i] = Loaded{File: "rank-" + string(rune('a'+i%26)), Summary: s}
	}
	return out
}
