package job

import "strconv"

// node is one call-prefix tree node: a function reached from the path of
// its ancestors (outermost frame at the root's children), with the ranks
// and the number of threads that passed through it.
type node struct {
	id       int
	name     string
	parent   *node
	children map[string]*node
	order    []*node // children in first-seen order
	ranks    rankSet
	threads  int
}

// tree is the call-prefix tree over every rank's threads.
type tree struct {
	root  *node
	nodes []*node // by id
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

// insert adds one call path of rank r, held by threads threads, and
// returns the node of its innermost frame. names are innermost first.
func (t *tree) insert(r int, names []string, elided, threads int) *node {
	nd := t.root
	nd.ranks.add(r)
	nd.threads += threads
	for i := len(names) - 1; i >= 0; i-- {
		nd = t.child(nd, names[i])
		nd.ranks.add(r)
		nd.threads += threads
		if elided > 0 && i == keepInnermost && len(names) == maxStackFrames {
			nd = t.child(nd, "… "+strconv.Itoa(elided)+" frames …")
			nd.ranks.add(r)
			nd.threads += threads
		}
	}
	return nd
}

func (t *tree) child(nd *node, name string) *node {
	c := nd.children[name]
	if c == nil {
		if nd.children == nil {
			nd.children = map[string]*node{}
		}
		c = t.newNode(name, nd)
		nd.children[name] = c
		nd.order = append(nd.order, c)
	}
	return c
}

// path lists the functions from nd up to the root's child, innermost first.
func (nd *node) path() []string {
	var out []string
	for ; nd != nil && nd.parent != nil; nd = nd.parent {
		out = append(out, nd.name)
	}
	return out
}

// TreeNode is the call-prefix tree as the JSON report gives it.
type TreeNode struct {
	Function string      `json:"function"`
	Ranks    string      `json:"ranks"`
	Count    int         `json:"count"`
	Threads  int         `json:"threads"`
	Children []*TreeNode `json:"children,omitempty"`
}

// export converts the tree below nd.
func (t *tree) export(nd *node) *TreeNode {
	ranks := nd.ranks.ranks()
	out := &TreeNode{Function: nd.name, Ranks: FormatRanks(ranks), Count: len(ranks), Threads: nd.threads}
	for _, c := range nd.order {
		out.Children = append(out.Children, t.export(c))
	}
	return out
}
