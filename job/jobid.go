package job

import (
	"fmt"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// jobIDRE is the job id syntax Slurm's commands take (scontrol(1),
// srun --jobid): a decimal job id, optionally an array task (_N) and a
// heterogeneous-job component offset (+N).
var jobIDRE = lazyregexp.New(`^[1-9][0-9]{0,9}(_[0-9]{1,10})?(\+[0-9]{1,10})?$`)

// ValidJobID checks that id is a Slurm job id before it is passed to
// scontrol or srun, so a JOBID such as "--help" is never read as an option.
func ValidJobID(id string) error {
	if !jobIDRE.MatchString(id) {
		return &UsageError{fmt.Errorf("%q is not a Slurm job id (JOBID[_ARRAYTASK][+HETOFFSET], e.g. 4242 or 4242_7)", id)}
	}
	return nil
}
