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
	"github.com/faultline-dev/faultline/analysis/report"
)

// The bundled crash: a statically linked program and the core it left, so the
// demo works on any Linux machine (testdata/native/gen.sh makes both).
var (
	//go:embed testdata/native/bin/demo
	demoExe []byte
	//go:embed testdata/native/cores/demo.core.gz
	demoCore []byte
)

func init() { commands["demo"] = cmdDemo }

func cmdDemo(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "markdown", "report format: markdown, text or json")
	jsonOut := fs.Bool("json", false, "print the crash model as JSON (same as --format json)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError{errors.New("demo takes no arguments")}
	}
	if *jsonOut {
		*format = "json"
	}
	if *format != "markdown" && *format != "text" && *format != "json" {
		return usageError{fmt.Errorf("unknown --format %q (markdown, text or json)", *format)}
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
	switch *format {
	case "json":
		return report.JSON(stdout, c)
	case "text":
		return report.Text(stdout, c)
	}
	return report.Markdown(stdout, c, "")
}
