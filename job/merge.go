package job

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxRanks bounds the rank numbers a merge accepts (rank sets are bit sets
// over 0..N-1).
const maxRanks = 1 << 20

// Report is the merged view of a job's rank summaries.
type Report struct {
	// Ranks is the job's size: the largest world size a summary states, or
	// the highest rank seen plus one.
	Ranks   int    `json:"ranks"`
	Missing string `json:"missing"`
	// Classes are the equivalence classes of ranks, smallest first.
	Classes []Class `json:"classes"`
	// OddOnesOut are the classes smaller than the largest, as rank lists.
	OddOnesOut []string         `json:"oddOnesOut"`
	Signatures []SignatureGroup `json:"signatures"`
	Hosts      []Placement      `json:"hosts"`
	Tree       *TreeNode        `json:"tree"`
	Problems   []FileProblem    `json:"problems"`
}

// Class is ranks whose threads took the same set of call paths (and, for
// crashes, with the same signature).
type Class struct {
	Ranks string   `json:"ranks"`
	Count int      `json:"count"`
	Hosts []string `json:"hosts"`
	// Frames is the call path that tells this class apart, innermost first:
	// its crashing or main thread's, unless the largest class has that one
	// too and another path differs.
	Frames    []string `json:"frames"`
	Signature string   `json:"signature"`
	// Sites are Frames with their source positions (of the first rank that
	// reached each), for editors.
	Sites []FrameRef `json:"sites,omitempty"`
	// Threads is how many threads each rank of the class has (of its first rank).
	Threads int `json:"threads"`
	// Paths is how many distinct call paths each rank of the class has.
	Paths int `json:"paths"`

	ranks  []int
	leaves []int // node ids of the paths, in the first rank's stack order
	main   int   // node id of the first rank's crashing or main thread path
}

// SignatureGroup is ranks that crashed the same way.
type SignatureGroup struct {
	Signature string    `json:"signature"`
	Kind      string    `json:"kind,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Ranks     string    `json:"ranks"`
	Count     int       `json:"count"`
	FirstRank int       `json:"firstRank"`
	FirstHost string    `json:"firstHost,omitempty"`
	FirstTime time.Time `json:"firstTime,omitzero"`
}

// Placement is the ranks that ran on one host.
type Placement struct {
	Host  string `json:"host"`
	Ranks string `json:"ranks"`
	Count int    `json:"count"`
}

// rankEntry is what the report keeps of one rank once its call paths are
// in the tree.
type rankEntry struct {
	rank  int
	file  string
	host  string
	sig   string
	crash *CrashBrief
	time  time.Time
}

// Merger merges rank summaries one at a time, keeping of each only what
// the report needs, so memory does not grow with the summaries' size.
type Merger struct {
	t          *tree
	entries    []rankEntry
	seen       map[int]string
	rankless   []Loaded
	anyRank    bool
	n          int
	problems   []FileProblem
	classIndex map[string]int
	classes    []Class
}

// NewMerger returns an empty merge.
func NewMerger() *Merger {
	return &Merger{t: newTree(), seen: map[int]string{}, classIndex: map[string]int{}}
}

// Problem records a file that could not be merged.
func (m *Merger) Problem(p FileProblem) { m.problems = append(m.problems, p) }

// Add merges the summary read from file. Its rank comes from its job
// object; summaries without one are numbered in file order when no
// summary has a rank, and reported otherwise.
func (m *Merger) Add(file string, s *Summary) {
	r, ok := s.Job.GlobalRank()
	switch {
	case !ok:
		m.rankless = append(m.rankless, Loaded{File: file, Summary: s})
		return
	case r < 0 || r >= maxRanks:
		m.Problem(FileProblem{File: file, Message: fmt.Sprintf("rank %d is outside 0..%d: not merged", r, maxRanks-1)})
		return
	}
	m.anyRank = true
	m.add(r, file, s)
}

func (m *Merger) add(r int, file string, s *Summary) {
	if prev, dup := m.seen[r]; dup {
		m.Problem(FileProblem{File: file, Message: fmt.Sprintf("rank %d again (first in %s): not merged", r, filepath.Base(prev))})
		return
	}
	m.seen[r] = file
	m.n = max(m.n, r+1)
	if w := s.Job.WorldSize; w != nil && *w <= maxRanks {
		m.n = max(m.n, *w)
	}
	e := rankEntry{rank: r, file: file, host: s.Job.Hostname, sig: signatureOf(s), crash: s.Crash, time: s.Job.Time}
	m.entries = append(m.entries, e)
	m.classify(e, s)
}

// Merge merges loaded summaries, in order, after the given load problems.
func Merge(loaded []Loaded, problems []FileProblem) *Report {
	m := NewMerger()
	m.problems = append(m.problems, problems...)
	for _, l := range loaded {
		m.Add(l.File, l.Summary)
	}
	return m.Report()
}

// Report finishes the merge.
func (m *Merger) Report() *Report {
	for i, l := range m.rankless {
		if m.anyRank {
			m.Problem(FileProblem{File: l.File, Message: "no rank in its job object (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID): not merged"})
			continue
		}
		m.add(i, l.File, l.Summary)
	}
	m.rankless = nil
	entries := m.entries
	sort.Slice(entries, func(i, j int) bool { return entries[i].rank < entries[j].rank })
	tree, cut := m.t.export()
	if cut > 0 {
		m.Problem(FileProblem{Message: fmt.Sprintf("call-prefix tree cut at %d nodes: %d left out", maxExportNodes, cut)})
	}
	r := &Report{Ranks: m.n, Classes: m.finishClasses(), Tree: tree, Problems: m.problems}
	r.Missing = FormatRanks(missingRanks(entries, m.n))
	r.OddOnesOut = oddOnesOut(r.Classes)
	r.Signatures = signatureGroups(entries)
	r.Hosts = placement(entries)
	if r.Problems == nil {
		r.Problems = []FileProblem{}
	}
	return r
}

func missingRanks(entries []rankEntry, n int) []int {
	var out []int
	next := 0
	for _, e := range entries {
		for ; next < e.rank; next++ {
			out = append(out, next)
		}
		next = e.rank + 1
	}
	for ; next < n; next++ {
		out = append(out, next)
	}
	return out
}

// signatureOf is a rank's crash signature: the classification's, else the
// signal's name; "" for a process that did not crash (a live one, or a
// core written by gcore).
func signatureOf(s *Summary) string {
	if s.Signal == nil {
		return ""
	}
	if s.Crash != nil && s.Crash.Signature != "" {
		return s.Crash.Signature
	}
	return s.Signal.Name
}

func placement(entries []rankEntry) []Placement {
	by := map[string][]int{}
	for _, e := range entries {
		by[e.host] = append(by[e.host], e.rank)
	}
	out := []Placement{}
	for h, rs := range by {
		out = append(out, Placement{Host: h, Ranks: FormatRanks(rs), Count: len(rs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

func oddOnesOut(classes []Class) []string {
	largest := 0
	for _, c := range classes {
		largest = max(largest, c.Count)
	}
	out := []string{}
	for _, c := range classes {
		if c.Count < largest {
			out = append(out, c.Ranks)
		}
	}
	return out
}

func signatureGroups(entries []rankEntry) []SignatureGroup {
	index := map[string]int{}
	var groups []SignatureGroup
	var ranks [][]int
	for _, e := range entries {
		sig := e.sig
		if sig == "" {
			continue
		}
		i, ok := index[sig]
		if !ok {
			i = len(groups)
			index[sig] = i
			g := SignatureGroup{Signature: sig, FirstRank: e.rank, FirstHost: e.host, FirstTime: e.time}
			if e.crash != nil {
				g.Kind, g.Summary = e.crash.Kind, e.crash.Summary
			}
			groups = append(groups, g)
			ranks = append(ranks, nil)
		}
		ranks[i] = append(ranks[i], e.rank)
		if g := &groups[i]; !e.time.IsZero() && (g.FirstTime.IsZero() || e.time.Before(g.FirstTime)) {
			g.FirstRank, g.FirstHost, g.FirstTime = e.rank, e.host, e.time
		}
	}
	for i := range groups {
		groups[i].Ranks, groups[i].Count = FormatRanks(ranks[i]), len(ranks[i])
	}
	sort.SliceStable(groups, func(i, j int) bool { return earlier(groups[i], groups[j]) })
	if groups == nil {
		groups = []SignatureGroup{}
	}
	return groups
}

// earlier orders signature groups by the time of their first failure
// (unknown times last), then by first rank.
func earlier(a, b SignatureGroup) bool {
	if a.FirstTime.IsZero() != b.FirstTime.IsZero() {
		return !a.FirstTime.IsZero()
	}
	if !a.FirstTime.Equal(b.FirstTime) {
		return a.FirstTime.Before(b.FirstTime)
	}
	return a.FirstRank < b.FirstRank
}

// classKey identifies an equivalence class: the signature and the sorted
// set of call-path leaves.
func classKey(sig string, leaves []int) string {
	sorted := slices.Clone(leaves)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var b strings.Builder
	b.WriteString(sig)
	for _, l := range sorted {
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}
