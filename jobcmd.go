package main

import (
	"errors"
	"fmt"
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
		return usageError{fmt.Errorf("%v (faultline job help lists the job commands)", ue.Err)}
	}
	return err
}
