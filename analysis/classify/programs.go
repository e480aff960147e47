package classify

import (
	"fmt"
	"path"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// programOf identifies the program a crash is of: its executable's
// build-id when the core recorded one, else its path. name is for people.
func programOf(c *model.Crash) (key, name string) {
	exe := c.Dump.Executable
	name = path.Base(exe)
	if exe == "" {
		name = ""
		if f := strings.Fields(c.Dump.Command); len(f) > 0 {
			// A log names only the command: "./items --fast".
			return "command:" + path.Base(f[0]), path.Base(f[0])
		}
	}
	for _, m := range c.Modules {
		if m.Path == exe && m.BuildID != "" {
			return "build-id:" + m.BuildID, name
		}
	}
	return "path:" + exe, name
}

// programKeys gives each crash its program (programOf). A crash whose
// input names no build-id or path, only the command (a gdb log), joins the
// program of the same name when the set has exactly one: the log and the
// core of one crash are one program.
func programKeys(crashes []*model.Crash) (keys, names []string) {
	byName := map[string][]string{}
	for _, c := range crashes {
		k, n := programOf(c)
		keys, names = append(keys, k), append(names, n)
		if !strings.HasPrefix(k, "command:") && n != "" && !contains(byName[n], k) {
			byName[n] = append(byName[n], k)
		}
	}
	for i, k := range keys {
		if ks := byName[names[i]]; strings.HasPrefix(k, "command:") && len(ks) == 1 {
			keys[i] = ks[0]
		}
	}
	return keys, names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// programCounts counts each program's cores and signatures.
type programCounts struct {
	order []string
	names map[string]string
	cores map[string]int
	sigs  map[string]map[string]bool
}

func newProgramCounts() *programCounts {
	return &programCounts{names: map[string]string{}, cores: map[string]int{}, sigs: map[string]map[string]bool{}}
}

func (p *programCounts) add(key, name, sig string) {
	if _, ok := p.cores[key]; !ok {
		p.order = append(p.order, key)
		p.names[key] = name
		p.sigs[key] = map[string]bool{}
	}
	p.cores[key]++
	p.sigs[key][sig] = true
}

// labels lists the programs as "name ×N" (with the build-id's start when
// two builds share a name).
func (p *programCounts) labels() []string {
	byName := map[string]int{}
	for _, k := range p.order {
		byName[p.names[k]]++
	}
	var out []string
	for _, k := range p.order {
		n := p.names[k]
		if n == "" {
			n = "(unknown program)"
		}
		if byName[p.names[k]] > 1 && strings.HasPrefix(k, "build-id:") {
			n += " (build " + strings.TrimPrefix(k, "build-id:")[:min(12, len(k)-9)] + ")"
		}
		out = append(out, fmt.Sprintf("%s ×%d", n, p.cores[k]))
	}
	return out
}

// verdict says whether the crashes are deterministic, program by program.
func (p *programCounts) verdict(n int, groups []Group) (string, string) {
	if len(p.order) <= 1 {
		switch {
		case n == 1:
			return SingleOccurrence, "One core: run the program several times and analyze the cores together to tell a deterministic bug from a race."
		case len(groups) == 1:
			return Deterministic, fmt.Sprintf("All %d cores crash the same way (%s): a deterministic bug at the culprit frame.", n, groups[0].Signature)
		}
		kinds := map[string]bool{}
		for _, g := range groups {
			kinds[g.Kind] = true
		}
		return NonDeterministic, fmt.Sprintf("%d cores crash in %d different ways (%d kinds): the crash sites are symptoms; suspect a data race or memory corruption earlier than the crash, and rebuild with -fsanitize=thread (TSAN) and -fsanitize=address (ASAN) to catch the cause.",
			n, len(groups), len(kinds))
	}
	var varied, same []string
	for i, k := range p.order {
		label := p.labels()[i]
		switch {
		case p.cores[k] < 2:
		case len(p.sigs[k]) > 1:
			varied = append(varied, label)
		default:
			same = append(same, label)
		}
	}
	head := fmt.Sprintf("The %d cores come from %d different programs (%s): each program's crashes are grouped and judged on their own, never against another program's.",
		n, len(p.order), strings.Join(p.labels(), ", "))
	switch {
	case len(varied) > 0:
		return NonDeterministic, head + fmt.Sprintf(" %s crash in more than one way: suspect a data race or memory corruption in them.", strings.Join(varied, ", "))
	case len(same) > 0:
		return Deterministic, head + fmt.Sprintf(" %s crash the same way every time.", strings.Join(same, ", "))
	}
	return SingleOccurrence, head + " No program has more than one core: run each several times to tell a deterministic bug from a race."
}
