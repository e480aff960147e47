package job

import (
	"slices"
	"strconv"
)

// node is one call-prefix tree node: a function reached from the path of
// its ancestors (outermost frame at the root's children), with the ranks
// and the number of threads that passed through it.
type node struct {
	id       int
	name     string
	site     FrameRef // the frame as the first rank through here had it
	parent   *node
	children map[string]*node
	order    []*node // children in first-seen order
	ranks    rankSet
	threads  int
}

// tree is the call-prefix tree over every rank's threads. Its rank sets
// hold dense indexes (the order ranks were added), so their size follows
// the ranks present, not the largest rank number a file claims.
type tree struct {
	root   *node
	nodes  []*node // by id
	rankOf []int   // dense index -> rank
}

// index returns the dense index of rank r, the next one for a new rank.
func (t *tree) index(r int) int {
	t.rankOf = append(t.rankOf, r)
	return len(t.rankOf) - 1
}

func newTree() *tree {
	t := &tree{}
	t.root = t.newNode("", nil)
	return t
}

func (t *tree) newNode(name string, parent *node) *node {
	nd := &node{id: len(t.nodes), name: name, parent: parent}
	t.nodes = append(t.nodes, nd)
	return nd
}

// insert adds one call path of the rank of dense index r, held by threads
// threads, and returns the node of its innermost frame. names are
// innermost first.
func (t *tree) insert(r int, frames []FrameRef, elided, threads int) *node {
	nd := t.root
	nd.ranks.add(r)
	nd.threads += threads
	for i := len(frames) - 1; i >= 0; i-- {
		nd = t.child(nd, frames[i])
		nd.ranks.add(r)
		nd.threads += threads
		if elided > 0 && i == keepInnermost && len(frames) == maxStackFrames {
			nd = t.child(nd, FrameRef{Function: "… " + strconv.Itoa(elided) + " frames …"})
			nd.ranks.add(r)
			nd.threads += threads
		}
	}
	return nd
}

func (t *tree) child(nd *node, f FrameRef) *node {
	c := nd.children[f.Function]
	if c == nil {
		if nd.children == nil {
			nd.children = map[string]*node{}
		}
		c = t.newNode(f.Function, nd)
		c.site = f
		nd.children[f.Function] = c
		nd.order = append(nd.order, c)
	}
	return c
}

// path lists the functions from nd up to the root's child, innermost
// first, and the frames they were seen as.
func (nd *node) path() ([]string, []FrameRef) {
	var names []string
	var sites []FrameRef
	for ; nd != nil && nd.parent != nil; nd = nd.parent {
		names = append(names, nd.name)
		sites = append(sites, nd.site)
	}
	return names, sites
}

// TreeNode is the call-prefix tree as the JSON report gives it.
type TreeNode struct {
	Function string      `json:"function"`
	Ranks    string      `json:"ranks"`
	Count    int         `json:"count"`
	Threads  int         `json:"threads"`
	Children []*TreeNode `json:"children,omitempty"`
}

// maxExportNodes caps the call-prefix tree a report holds: a merge of
// rank files whose paths share no prefix would otherwise give a node per
// frame of every file, each with its function name.
const maxExportNodes = 1 << 17

// export converts the tree below the root, at most maxExportNodes nodes
// in depth-first order; it returns how many nodes were left out.
func (t *tree) export() (*TreeNode, int) {
	budget := maxExportNodes
	root := t.exportNode(t.root, &budget)
	return root, len(t.nodes) - (maxExportNodes - budget)
}

func (t *tree) exportNode(nd *node, budget *int) *TreeNode {
	*budget--
	ranks := nd.ranks.ranks()
	for i, r := range ranks {
		ranks[i] = t.rankOf[r]
	}
	slices.Sort(ranks)
	out := &TreeNode{Function: nd.name, Ranks: FormatRanks(ranks), Count: len(ranks), Threads: nd.threads}
	for _, c := range nd.order {
		if *budget <= 0 {
			break
		}
		out.Children = append(out.Children, t.exportNode(c, budget))
	}
	return out
}
