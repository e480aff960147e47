package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

var versionCommand = &command{
	name:     "version",
	short:    "",
	long:     "Version prints faultline's version (the module version, or the VCS revision it was built from).",
	examples: []string{"faultline version"},
	new:      func() runner { return versionRun{} },
}

// versionRun is one `faultline version`.
type versionRun struct{}

func (versionRun) flags(*flag.FlagSet) {}

func (versionRun) run(args []string, stdout, _ io.Writer) error {
	if len(args) != 0 {
		return usageError{errors.New("version takes no arguments")}
	}
	fmt.Fprintln(stdout, "faultline", version())
	return nil
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
		if v != "" && v != "(devel)" {
			return v
		}
	}
	return "devel"
}
