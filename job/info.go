package job

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Info is a rank summary's "job" object: where the process ran and which
// rank of which job it was, read from its own environment (SLURM_*, the
// torch.distributed RANK/LOCAL_RANK/WORLD_SIZE, Open MPI's and PMI's ranks).
type Info struct {
	Hostname  string `json:"hostname"`
	JobID     string `json:"slurmJobId,omitempty"`
	StepID    string `json:"slurmStepId,omitempty"`
	ProcID    *int   `json:"slurmProcId,omitempty"`
	LocalID   *int   `json:"slurmLocalId,omitempty"`
	Rank      *int   `json:"rank,omitempty"`
	LocalRank *int   `json:"localRank,omitempty"`
	WorldSize *int   `json:"worldSize,omitempty"`
	OMPIRank  *int   `json:"ompiCommWorldRank,omitempty"`
	PMIRank   *int   `json:"pmiRank,omitempty"`
	// PID is the process id (of the core's process, or the live one).
	PID int `json:"pid,omitempty"`
	// Time is when the core was written or the live process was sampled.
	Time time.Time `json:"time,omitzero"`
	// Source is "core" or "live".
	Source string `json:"source,omitempty"`
}

// envKeys are the environment variables Info is read from.
var envKeys = []string{"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID",
	"SLURM_NTASKS", "SLURMD_NODENAME", "RANK", "LOCAL_RANK", "WORLD_SIZE",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"}

// InfoFromEnv reads a process's job identity from its environment. host is
// the machine's name, used when the environment has no SLURMD_NODENAME.
func InfoFromEnv(env map[string]string, host string) Info {
	in := Info{Hostname: host, JobID: env["SLURM_JOB_ID"], StepID: env["SLURM_STEP_ID"]}
	if n := env["SLURMD_NODENAME"]; n != "" {
		in.Hostname = n
	}
	in.ProcID = envInt(env, "SLURM_PROCID")
	in.LocalID = envInt(env, "SLURM_LOCALID")
	in.Rank = envInt(env, "RANK")
	in.LocalRank = envInt(env, "LOCAL_RANK")
	in.OMPIRank = envInt(env, "OMPI_COMM_WORLD_RANK")
	in.PMIRank = envInt(env, "PMI_RANK")
	for _, k := range []string{"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"} {
		if in.WorldSize = envInt(env, k); in.WorldSize != nil {
			break
		}
	}
	return in
}

// GlobalRank is the process's rank in the job: RANK, else
// OMPI_COMM_WORLD_RANK, else PMI_RANK, else SLURM_PROCID.
func (in Info) GlobalRank() (int, bool) {
	for _, r := range []*int{in.Rank, in.OMPIRank, in.PMIRank, in.ProcID} {
		if r != nil {
			return *r, true
		}
	}
	return 0, false
}

func envInt(env map[string]string, key string) *int {
	v, ok := env[key]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// ParseEnviron splits NUL-separated KEY=VALUE strings (/proc/PID/environ,
// the strings at the top of a core's stack), keeping only the variables
// Info reads.
func ParseEnviron(b []byte) map[string]string {
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && isEnvKey(k) {
			env[k] = v
		}
	}
	return env
}

func isEnvKey(k string) bool {
	for _, e := range envKeys {
		if k == e {
			return true
		}
	}
	return false
}

// ProcessEnv reads a live process's environment from /proc/PID/environ.
func ProcessEnv(pid int) (map[string]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	return ParseEnviron(b), nil
}
