package e2e

import (
	"encoding/json"
	"testing"
)

// crashJSON is the part of `--json` output (schema faultline.crash/v1) the
// tests read, decoded as a user's script would.
type crashJSON struct {
	Schema string
	Dump   struct{ Path, Format, Executable string }
	Signal *struct {
		Name string
		Code string
	}
	CrashingThread int
	Threads        []struct {
		ID     int
		Frames []frameJSON
	}
	Modules []struct {
		Path, BuildID string
	}
	Crash *struct {
		Kind, Signature, Summary string
		CulpritFrame             int
	}
	Problems []struct{ Module, Message string }
}

type frameJSON struct {
	Function, File, Language string
	Line                     int
	Inlined                  bool
}

func decodeCrash(t *testing.T, r result) crashJSON {
	t.Helper()
	var c crashJSON
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("stdout is not a crash model: %v\n%s", err, r)
	}
	if c.Schema != "faultline.crash/v1" {
		t.Fatalf("schema %q\n%s", c.Schema, r)
	}
	return c
}

// crashed is the crashing thread's frames.
func (c crashJSON) crashed() []frameJSON {
	for _, th := range c.Threads {
		if th.ID == c.CrashingThread {
			return th.Frames
		}
	}
	return nil
}

// functions lists frames' function names, innermost first.
func functions(frames []frameJSON) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.Function)
	}
	return out
}
