// Command apportreport writes the apport report apport would write of a
// core (gzip'd or not): the report of an unpackaged program crashed on
// Debian 12 (ProblemType, ExecutablePath and ProcCmdline as the core
// records them, the signal, no Package), the core in CoreDump.
// testdata/native/gen.sh makes cores/null_inline.crash with it:
//
//	go run ./internal/apporttest/apportreport CORE OUT
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/input"
	"github.com/faultline-dev/faultline/internal/apporttest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: apportreport CORE OUT")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "apportreport:", err)
		os.Exit(1)
	}
}

func write(core, out string) error {
	c, err := analysis.Open(core, analysis.Options{Offline: true})
	if err != nil {
		return err
	}
	if c.Signal == nil {
		return fmt.Errorf("%s records no signal", core)
	}
	in, err := input.Open(core)
	if err != nil {
		return err
	}
	defer in.Close()
	var b bytes.Buffer
	err = apporttest.Write(&b, map[string]string{
		"ProblemType": "Crash", "Architecture": "amd64", "DistroRelease": "Debian 12",
		"ExecutablePath": c.Dump.Executable, "ProcCmdline": c.Dump.Command,
		"Signal": strconv.Itoa(c.Signal.Number), "SignalName": c.Signal.Name, "UserGroups": "N/A",
		"ProcEnviron": "LANG=C.UTF-8\nPATH=(custom, no user)\nSHELL=/bin/bash",
	}, map[string]io.Reader{"CoreDump": in.Reader()})
	if err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}
