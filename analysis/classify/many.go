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
	Crashes  []*model.Crash  `json:"crashes"`
	// Failed lists the dumps that could not be opened.
	Failed []Failure `json:"failed,omitempty"`
}

// Group is the crashes sharing one signature.
type Group struct {
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
		if t.ID == c.CrashingThread && cls.CulpritFrame >= 0 && cls.CulpritFrame < len(t.Frames) {
			f := t.Frames[cls.CulpritFrame]
			return describeFrame(f, orDefault(baseName(f.Function), "??"))
		}
	}
	return ""
}

// Group groups classified crashes by signature, largest group first, and
// says whether the crash is deterministic: one signature for all of them
// is, several are not — then the crash site is a symptom and the cause (a
// race, a corruption) happened earlier.
func GroupCrashes(crashes []*model.Crash) *Set {
	s := &Set{Schema: SetSchema, Crashes: crashes, Groups: []Group{}}
	index := map[string]int{}
	for _, c := range crashes {
		if c.Classification == nil {
			Classify(c, nil)
		}
		sig := c.Classification.Signature
		i, ok := index[sig]
		if !ok {
			i = len(s.Groups)
			index[sig] = i
			s.Groups = append(s.Groups, Group{Signature: sig, Kind: c.Classification.Kind, Culprit: Culprit(c)})
		}
		s.Groups[i].Dumps = append(s.Groups[i].Dumps, c.Dump.Path)
		s.Groups[i].Crashes = append(s.Groups[i].Crashes, c)
	}
	sort.SliceStable(s.Groups, func(i, j int) bool { return len(s.Groups[i].Dumps) > len(s.Groups[j].Dumps) })

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
	switch {
	case len(crashes) == 1:
		s.Determinism = SingleOccurrence
		s.Verdict = "One core: run the program several times and analyze the cores together to tell a deterministic bug from a race."
	case len(s.Groups) == 1:
		s.Determinism = Deterministic
		s.Verdict = fmt.Sprintf("All %d cores crash the same way (%s): a deterministic bug at the culprit frame.", len(crashes), s.Groups[0].Signature)
	default:
		s.Determinism = NonDeterministic
		kinds := map[string]bool{}
		for _, g := range s.Groups {
			kinds[g.Kind] = true
		}
		s.Verdict = fmt.Sprintf("%d cores crash in %d different ways (%d kinds): the crash sites are symptoms; suspect a data race or memory corruption earlier than the crash, and rebuild with -fsanitize=thread (TSAN) and -fsanitize=address (ASAN) to catch the cause.",
			len(crashes), len(s.Groups), len(kinds))
	}
	if races > 0 {
		s.Findings = append(s.Findings, model.Finding{Kind: "likely-race",
			Summary: fmt.Sprintf("likely race in %d of %d cores (%s)", races, len(crashes), strings.Join(raceThreads, "; "))})
	}
	return s
}

func baseFile(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
