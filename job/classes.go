package job

import (
	"slices"
	"sort"
)

// classify inserts one rank's call paths into the tree and adds the rank
// to its equivalence class.
func (m *Merger) classify(e rankEntry, s *Summary) {
	leaves, main := insertRank(m.t, m.t.index(e.rank), s)
	key := classKey(e.sig, leaves)
	i, ok := m.classIndex[key]
	if !ok {
		i = len(m.classes)
		m.classIndex[key] = i
		m.classes = append(m.classes, Class{Signature: e.sig, Threads: s.ThreadCount, leaves: leaves, main: main})
	}
	c := &m.classes[i]
	c.ranks = append(c.ranks, e.rank)
	if !slices.Contains(c.Hosts, e.host) {
		c.Hosts = append(c.Hosts, e.host)
	}
}

// finishClasses names every class's ranks, hosts and distinguishing
// frames, and orders them smallest first (ties: lowest rank first).
func (m *Merger) finishClasses() []Class {
	classes := m.classes
	for i := range classes {
		slices.Sort(classes[i].ranks)
	}
	largest := largestClass(classes)
	for i := range classes {
		c := &classes[i]
		c.Ranks, c.Count = FormatRanks(c.ranks), len(c.ranks)
		sort.Strings(c.Hosts)
		c.Paths = len(uniqueInts(c.leaves))
		c.Frames, c.Sites = m.t.nodes[distinguishingLeaf(c, largest, classes)].path()
		if c.Frames == nil {
			c.Frames = []string{}
		}
	}
	sort.SliceStable(classes, func(i, j int) bool {
		if classes[i].Count != classes[j].Count {
			return classes[i].Count < classes[j].Count
		}
		return classes[i].ranks[0] < classes[j].ranks[0]
	})
	if classes == nil {
		classes = []Class{}
	}
	return classes
}

// insertRank adds the call paths of the rank of dense index index to the
// tree. It returns the leaf
// node of every stack, in the summary's order, and the leaf of the crashing
// thread's path (else the main thread's, else the first).
func insertRank(t *tree, index int, s *Summary) (leaves []int, main int) {
	frames := make([]FrameRef, 0, 64)
	main = t.root.id
	mainScore := -1
	for _, st := range s.Stacks {
		frames = frames[:0]
		for _, f := range st.Frames {
			frames = append(frames, s.Frames[f])
		}
		leaf := t.insert(index, frames, st.Elided, len(st.Threads))
		leaves = append(leaves, leaf.id)
		score := 0
		switch {
		case st.Crashed:
			score = 2
		case s.Dump.PID != 0 && slices.Contains(st.Threads, s.Dump.PID):
			score = 1
		}
		if score > mainScore {
			main, mainScore = leaf.id, score
		}
	}
	if len(leaves) == 0 {
		t.root.ranks.add(index)
	}
	return leaves, main
}

func largestClass(classes []Class) int {
	best := -1
	for i, c := range classes {
		if best < 0 || len(c.ranks) > len(classes[best].ranks) || len(c.ranks) == len(classes[best].ranks) && c.ranks[0] < classes[best].ranks[0] {
			best = i
		}
	}
	return best
}

// distinguishingLeaf picks the call path shown for class c: its main path,
// unless c is not the largest class, the largest class has that path too,
// and c has a path the largest class does not.
func distinguishingLeaf(c *Class, largest int, classes []Class) int {
	if largest < 0 || c == &classes[largest] {
		return c.main
	}
	common := classes[largest].leaves
	if !slices.Contains(common, c.main) {
		return c.main
	}
	for _, l := range c.leaves {
		if !slices.Contains(common, l) {
			return l
		}
	}
	return c.main
}

func uniqueInts(xs []int) []int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return slices.Compact(s)
}
