package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/capture"
	"github.com/faultline-dev/faultline/job"
)

var jobCommand = &command{
	name:  "job",
	args:  "collect JOBID --out DIR [--hang] [--cores DIR] | job report [--json] DIR",
	short: "a crashed or hung multi-node job through Slurm, merged like STAT",
	long:  job.Usage,
	examples: []string{
		"faultline job collect 123456 --out job-123456",
		"faultline job collect 123456 --out job-123456 --hang",
		"faultline job report job-123456",
	},
	ownArgs: true,
	new:     func() runner { return jobRun{} },
}

// jobRun is one `faultline job`: package job parses its own subcommands.
type jobRun struct{}

func (jobRun) flags(*flag.FlagSet) {}

// run runs `faultline job collect|report|local` (package job); live
// processes are written to cores with hang's writer.
func (jobRun) run(args []string, stdout, stderr io.Writer) error {
	err := job.Main(args, stdout, stderr, capture.LiveCore)
	var ue *job.UsageError
	if errors.As(err, &ue) {
		return usageError{fmt.Errorf("%v (faultline job help lists the job commands)", ue.Err)}
	}
	return err
}
