package main

import (
	"errors"
	"io"

	"github.com/faultline-dev/faultline/job"
)

func init() { commands["job"] = cmdJob }

// cmdJob runs `faultline job collect|report|local` (package job); live
// processes are written to cores with hang's writer.
func cmdJob(args []string, stdout, stderr io.Writer) error {
	err := job.Main(args, stdout, stderr, liveCore)
	var ue *job.UsageError
	if errors.As(err, &ue) {
		io.WriteString(stderr, job.Usage)
		return usageError{ue.Err}
	}
	return err
}
