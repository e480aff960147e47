package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunNULLog runs testdata/dataloader.py with cores off (RLIMIT_CORE 0):
// the job's stderr, with the NUL byte PyTorch's worker handler writes, is
// read as the faulthandler log it is, not rejected as binary.
func TestRunNULLog(t *testing.T) {
	job, _ := filepath.Abs(filepath.Join("testdata", "dataloader.py"))
	crashLine := fmt.Sprintf("dataloader.py:%d", markerLine(t, "dataloader.py", "WORKER CRASH"))
	dir := t.TempDir()
	r := command(t, invocation{dir: dir, timeout: 3 * time.Minute}, "prlimit", "--core=0:0", "--", binary, "run", "--", debianPython, job)
	wantExit(t, r, 1)
	wantContains(t, "run report without cores", r.stdout, "Fatal Python error", "load_sample", crashLine)
	if strings.Contains(r.stdout, "nothing to analyze") {
		t.Errorf("the job's log was not analyzed:\n%s", r)
	}
}
