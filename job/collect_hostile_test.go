package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// fakeSlurm puts scontrol and srun scripts first in PATH: scontrol
// records its arguments and says the job runs on one node; srun prints
// line (a rank summary, as `job local` on the node would).
func fakeSlurm(t *testing.T, line string) (env []string, record string) {
	t.Helper()
	bin := t.TempDir()
	record = filepath.Join(bin, "ran")
	scripts := map[string]string{
		"scontrol": "#!/bin/sh\necho \"scontrol $*\" >> " + record + "\necho 'JobId=1 JobState=RUNNING NumNodes=1 WorkDir=/tmp StartTime=2024-01-01T00:00:00'\n",
		"srun":     "#!/bin/sh\necho \"srun $*\" >> " + record + "\ncat <<'EOF'\n" + line + "\nEOF\n",
	}
	for name, s := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, record
}

// TestCollectDoesNotFollowPlantedSymlink (issue 24 item 9): a symlink
// planted in OUT where collect used to write its temporary file
// (.rank-00000.json.tmp) must not redirect the write: the victim keeps its
// content and the rank file is written.
func TestCollectDoesNotFollowPlantedSymlink(t *testing.T) {
	out, other := t.TempDir(), t.TempDir()
	victim := filepath.Join(other, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, ".rank-00000.json.tmp")); err != nil {
		t.Fatal(err)
	}
	line := `{"schema":"` + SummarySchema + `","job":{"hostname":"n0","rank":0},"dump":{"path":"core","format":"elf-core"},"threadCount":1,"frames":[{"function":"main"}],"stacks":[{"threads":[1],"crashed":true,"frames":[0]}]}`
	env, _ := fakeSlurm(t, line)
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"job", "collect", "4242", "--out", out}, Env: env, Limits: boundtest.Limits{Wall: 30 * time.Second}})
	if r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("collect wrote through the planted symlink: the victim now holds %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(out, "rank-00000.json")); err != nil || !strings.Contains(string(b), `"function":"main"`) {
		t.Errorf("rank file not written (%v): %q", err, b)
	}
	if fi, err := os.Lstat(filepath.Join(out, ".rank-00000.json.tmp")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted symlink was replaced or removed (%v)", err)
	}
}

// TestJobIDSyntax (issue 24 item 12): a JOBID that is not Slurm's
// JOBID[_ARRAYTASK][+HETOFFSET] is refused before scontrol runs.
func TestJobIDSyntax(t *testing.T) {
	env, record := fakeSlurm(t, "")
	for _, id := range []string{"--help", "-o", "1;id", "12 13", "", "0x10", "１２"} {
		args := []string{"job", "collect", "--out", t.TempDir(), "--", id}
		r := boundtest.Run(t, boundtest.Cmd{Args: args, Env: env, Limits: boundtest.Limits{Wall: 30 * time.Second}})
		if r.Exit == 0 || !strings.Contains(r.Stderr, "not a Slurm job id") {
			t.Errorf("job collect %q: want a refusal naming the syntax; %v\n%s", id, r, r.Stderr)
		}
		r = boundtest.Run(t, boundtest.Cmd{Args: []string{"job", "local", "--", id}, Env: env, Limits: boundtest.Limits{Wall: 30 * time.Second}})
		if r.Exit == 0 || !strings.Contains(r.Stderr, "not a Slurm job id") {
			t.Errorf("job local %q: want a refusal naming the syntax; %v\n%s", id, r, r.Stderr)
		}
	}
	if b, err := os.ReadFile(record); err == nil {
		t.Errorf("a malformed JOBID reached Slurm:\n%s", b)
	}
	for _, id := range []string{"4242", "4242_7", "4242+1", "4242_7+1"} {
		if err := ValidJobID(id); err != nil {
			t.Errorf("ValidJobID(%q): %v", id, err)
		}
	}
}
