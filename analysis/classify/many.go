package classify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// SetSchema is the schema of a many-core analysis (`faultline analyze
// --json CORE1 CORE2 ...`).
const SetSchema = "faultline.crash-set/v1"

// Determinism verdicts.
const (
	Deterministic    = "deterministic"
	NonDeterministic = "non-deterministic"
	SingleOccurrence = "unknown (single occurrence)"
)

// Set is several crashes of one program, grouped by signature.
type Set struct {
	Schema string `json:"schema"`
	// Determinism is Deterministic when every crash has the same
	// signature, NonDeterministic when they differ.
	Determinism string `json:"determinism"`
	// Verdict explains Determinism in a sentence.
	Verdict  string          `json:"verdict"`
	Groups   []Group         `json:"groups"`
	Findings []model.Finding `json:"findings,omitempty"`
	// Programs lists the programs the cores come from ("trainer ×3"), when
	// they are more than one: crashes are grouped by program first.
	Programs []string       `json:"programs,omitempty"`
	Crashes  []*model.Crash `json:"crashes"`
	// Failed lists the dumps that could not be opened.
	Failed []Failure `json:"failed,omitempty"`
}

// Group is the crashes sharing one signature.
type Group struct {
	// Program is the crashed executable's name, when the set mixes programs.
	Program   string   `json:"program,omitempty"`
	Signature string   `json:"signature"`
	Kind      string   `json:"kind"`
	Culprit   string   `json:"culprit,omitempty"`
	Dumps     []string `json:"dumps"`
	// Crashes are the group's crash models (the Set lists them all).
	Crashes []*model.Crash `json:"-"`
}

// Failure is a dump that could not be opened.
type Failure struct {
	Dump  string `json:"dump"`
	Error string `json:"error"`
}

// Culprit names a crash's culprit frame: "churn (racy_map.cpp:25)".
func Culprit(c *model.Crash) string {
	cls := c.Classification
	if cls == nil {
		return ""
	}
	for _, t := range c.Threads {
		if t.ID == c.CrashingThreadID && cls.CulpritFrame >= 0 && cls.CulpritFrame < len(t.Frames) {
			f := t.Frames[cls.CulpritFrame]
			return describeFrame(f, orDefault(baseName(f.Function), "??"))
		}
	}
	return ""
}

// GroupCrashes groups classified crashes by program (executable and
// build-id) and then by signature, largest group first, and says whether
// each program's crash is deterministic: one signature for all its cores
// is, several are not — then the crash site is a symptom and the cause (a
// race, a corruption) happened earlier. Crashes of different programs are
// never compared with each other.
func GroupCrashes(crashes []*model.Crash) *Set {
	s := &Set{Schema: SetSchema, Crashes: crashes, Groups: []Group{}}
	index := map[string]int{}
	progs := newProgramCounts()
	for _, c := range crashes {
		if c.Classification == nil {
			Classify(c, nil)
		}
	}
	keys, names := programKeys(crashes)
	for ci, c := range crashes {
		sig := c.Classification.Signature
		prog, name := keys[ci], names[ci]
		progs.add(prog, name, sig)
		key := prog + "\x00" + sig
		i, ok := index[key]
		if !ok {
			i = len(s.Groups)
			index[key] = i
			s.Groups = append(s.Groups, Group{Program: name, Signature: sig, Kind: c.Classification.Kind, Culprit: Culprit(c)})
		}
		s.Groups[i].Dumps = append(s.Groups[i].Dumps, c.Dump.Path)
		s.Groups[i].Crashes = append(s.Groups[i].Crashes, c)
	}
	sort.SliceStable(s.Groups, func(i, j int) bool { return len(s.Groups[i].Dumps) > len(s.Groups[j].Dumps) })
	if len(progs.order) > 1 {
		s.Programs = progs.labels()
	} else {
		for i := range s.Groups {
			s.Groups[i].Program = ""
		}
	}
	s.Determinism, s.Verdict = progs.verdict(len(crashes), s.Groups)
	s.Findings = append(s.Findings, raceFindings(crashes)...)
	return s
}

// raceFindings summarises the likely races found in the cores.
func raceFindings(crashes []*model.Crash) []model.Finding {
	races := 0
	var raceThreads []string
	for _, c := range crashes {
		for _, f := range c.Classification.Findings {
			if f.Kind == "likely-race" {
				races++
				raceThreads = append(raceThreads, fmt.Sprintf("%s: threads %s", baseFile(c.Dump.Path), joinInts(f.Threads)))
				break
			}
		}
	}
	if races == 0 {
		return nil
	}
	return []model.Finding{{Kind: "likely-race",
		Summary: fmt.Sprintf("likely race in %d of %d cores (%s)", races, len(crashes), strings.Join(raceThreads, "; "))}}
}

func baseFile(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
