package main

import (
	"errors"
	"flag"
	"io"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/report"
)

func init() { commands["analyze"] = cmdAnalyze }

func cmdAnalyze(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.Bool("json", false, "print the crash model as JSON (schema faultline.crash/v1)")
	var of openFlags
	of.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{errors.New("expected exactly one DUMP")}
	}
	c, err := analysis.Open(pos[0], of.options())
	if err != nil {
		return err
	}
	if *jsonOut {
		return report.JSON(stdout, c)
	}
	return report.Text(stdout, c)
}
