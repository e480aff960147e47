package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/faultline-dev/faultline/analysis"
)

// The bundled crash: a statically linked program and the core it left, so the
// demo works on any Linux machine (testdata/native/gen.sh makes both).
var (
	//go:embed testdata/native/bin/demo
	demoExe []byte
	//go:embed testdata/native/cores/demo.core.gz
	demoCore []byte
)

var demoCommand = &command{
	name:  "demo",
	args:  "[--format markdown|text|json]",
	short: "analyze the bundled crash (a static program and its core)",
	long: `Demo analyzes the crash bundled into faultline: a statically linked program
and the core it left, so the report can be tried on any Linux machine.`,
	examples:     []string{"faultline demo", "faultline demo --format text"},
	interspersed: true,
	new:          func() runner { return &demoRun{} },
}

// demoRun is one `faultline demo`.
type demoRun struct{ format formatFlags }

func (d *demoRun) flags(fs *flag.FlagSet) {
	d.format.register(fs, "markdown", "report format: markdown, text or json", "print the crash model as JSON (same as --format json)")
}

func (d *demoRun) run(pos []string, stdout, _ io.Writer) error {
	if len(pos) != 0 {
		return usageError{errors.New("demo takes no arguments")}
	}
	format, err := d.format.parse()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "faultline-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "demo")
	core := filepath.Join(dir, "demo.core.gz")
	if err := os.WriteFile(exe, demoExe, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(core, demoCore, 0o644); err != nil {
		return err
	}
	// The bundled crash needs nothing from the network.
	c, err := analysis.Open(core, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		return fmt.Errorf("analyzing the bundled crash: %w", err)
	}
	// Report the bundled names, not the temporary directory.
	c.Dump.Path = "demo.core.gz (bundled)"
	return writeReport(stdout, c, format)
}
