package job

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// maxTreeLines caps the call-prefix tree in the markdown report.
const maxTreeLines = 300

// Markdown writes the report for a person: odd ones out first, then every
// class, the crash signatures, placement, the merged tree and problems.
func (r *Report) Markdown(w io.Writer) error {
	p := &mdWriter{w: w}
	present := 0
	for _, c := range r.Classes {
		present += c.Count
	}
	p.f("# Job report: %d ranks, %d summarized", r.Ranks, present)
	if r.Missing != "" {
		p.f(", missing %s", r.Missing)
	}
	p.f("\n\n")
	r.mdOddOnesOut(p)
	r.mdClasses(p)
	r.mdSignatures(p)
	r.mdHosts(p)
	r.mdTree(p)
	if len(r.Problems) > 0 {
		p.f("## Problems\n\n")
		for _, pr := range r.Problems {
			if pr.Offset > 0 {
				p.f("- %s (byte %d): %s\n", filepath.Base(pr.File), pr.Offset, pr.Message)
			} else {
				p.f("- %s: %s\n", filepath.Base(pr.File), pr.Message)
			}
		}
		p.f("\n")
	}
	return p.err
}

func (r *Report) mdOddOnesOut(p *mdWriter) {
	if len(r.OddOnesOut) == 0 {
		if len(r.Classes) > 1 {
			p.f("No odd ones out: the largest classes are the same size.\n\n")
		}
		return
	}
	p.f("## Odd ones out\n\n")
	for _, c := range r.Classes {
		if c.Count >= r.Classes[len(r.Classes)-1].Count {
			break
		}
		p.f("- rank%s %s on %s: %s\n", plural(c.Count), c.Ranks, strings.Join(c.Hosts, ", "), framesLine(c.Frames, 6))
	}
	p.f("\n")
}

func (r *Report) mdClasses(p *mdWriter) {
	p.f("## Equivalence classes (smallest first)\n\n")
	for i, c := range r.Classes {
		p.f("### %d. rank%s %s (%d)\n\n", i+1, plural(c.Count), c.Ranks, c.Count)
		p.f("hosts: %s; %d threads, %d distinct call paths\n", strings.Join(c.Hosts, ", "), c.Threads, c.Paths)
		if c.Signature != "" {
			p.f("signature: `%s`\n", c.Signature)
		}
		p.f("\n")
		for j, f := range c.Frames {
			p.f("    #%-3d %s\n", j, f)
		}
		p.f("\n")
	}
}

func (r *Report) mdSignatures(p *mdWriter) {
	if len(r.Signatures) == 0 {
		return
	}
	p.f("## Crash signatures (first failure first)\n\n| signature | kind | ranks | first rank | host | time |\n|---|---|---|---|---|---|\n")
	for _, g := range r.Signatures {
		t := ""
		if !g.FirstTime.IsZero() {
			t = g.FirstTime.UTC().Format("2006-01-02 15:04:05.000Z")
		}
		p.f("| `%s` | %s | %s | %d | %s | %s |\n", g.Signature, g.Kind, g.Ranks, g.FirstRank, g.FirstHost, t)
	}
	p.f("\n")
}

// mdHosts lists placement, and names a host whose ranks all sit in one
// class that is an odd one out (a bad node).
func (r *Report) mdHosts(p *mdWriter) {
	p.f("## Placement\n\n| host | ranks | count |\n|---|---|---|\n")
	for _, h := range r.Hosts {
		p.f("| %s | %s | %d |\n", h.Host, h.Ranks, h.Count)
	}
	p.f("\n")
	for _, c := range r.Classes {
		if len(c.Hosts) != 1 || !containsString(r.OddOnesOut, c.Ranks) {
			continue
		}
		for _, h := range r.Hosts {
			if h.Host == c.Hosts[0] && h.Ranks == c.Ranks && h.Count > 1 {
				p.f("All %d ranks of host %s are in one odd class: suspect the node.\n\n", h.Count, h.Host)
			}
		}
	}
}

func (r *Report) mdTree(p *mdWriter) {
	if r.Tree == nil || len(r.Tree.Children) == 0 {
		return
	}
	p.f("## Call-prefix tree (outermost first; [ranks] threads)\n\n```\n")
	lines := 0
	var walk func(n *TreeNode, depth int)
	walk = func(n *TreeNode, depth int) {
		for _, c := range n.Children {
			if lines++; lines > maxTreeLines {
				return
			}
			p.f("%s%s [%s] %d\n", strings.Repeat("  ", depth), c.Function, c.Ranks, c.Threads)
			walk(c, depth+1)
		}
	}
	walk(r.Tree, 0)
	if lines > maxTreeLines {
		p.f("… (tree cut at %d lines; --json has all of it)\n", maxTreeLines)
	}
	p.f("```\n\n")
}

func framesLine(frames []string, n int) string {
	if len(frames) == 0 {
		return "(no frames)"
	}
	var quoted []string
	for i, f := range frames {
		if i == n {
			quoted = append(quoted, "…")
			break
		}
		quoted = append(quoted, "`"+f+"`")
	}
	return strings.Join(quoted, " ← ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

type mdWriter struct {
	w   io.Writer
	err error
}

func (p *mdWriter) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
