// Package slurmtest starts a real one-node Slurm for tests: Debian's
// slurmctld and slurmd (22.05) and munged, configured by the test with a
// private state directory, munge key and socket, every daemon bound to
// 127.0.0.1, and stopped (by pid) when the test ends. It needs root:
// slurmd starts the tasks as the submitting user, and SlurmUser/SlurmdUser
// are root so no slurm account is needed (CI runs the tests as root).
package slurmtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running one-node Slurm: node "fl1" with 8 CPUs.
type Cluster struct {
	// Dir holds the configuration, state, logs and Work, the jobs'
	// working directory; Conf is slurm.conf (SLURM_CONF for clients).
	Dir, Conf string
	daemons   []*exec.Cmd
	jobs      []string
}

// Start configures and starts the cluster and waits for its node to be
// idle; the test's cleanup cancels its jobs and stops the daemons. Cores of
// the tasks are on (RLIMIT_CORE unlimited, inherited by slurmd and srun).
func Start(t testing.TB) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the Slurm test runs slurmd, which must be root to start tasks; run it as root (CI does)")
	}
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "srun", "sbatch", "scontrol", "scancel", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (.ci/install.d/slurm.sh installs slurmctld slurmd munge slurm-client)", tool)
		}
	}
	// Cores of crashing tasks: the limit slurmd and srun pass to the tasks.
	unlimited := syscall.Rlimit{Cur: ^uint64(0), Max: ^uint64(0)}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &unlimited); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fl-slurm-") // short: the munge socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	t.Cleanup(func() { c.stop(t) })
	for _, d := range []string{"munge", "state", "spool", "log", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	f, _ := os.Open("/dev/urandom")
	f.Read(key)
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "munge/munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, []byte(c.config(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(t, "munged", "-F", "--force", "--socket="+c.Path("munge/munge.socket"),
		"--key-file="+c.Path("munge/munge.key"), "--pid-file="+c.Path("munge/munged.pid"),
		"--log-file="+c.Path("log/munged.log"), "--seed-file="+c.Path("munge/munged.seed"))
	c.WaitFor(t, "munge socket", func() bool { _, err := os.Stat(c.Path("munge/munge.socket")); return err == nil })
	c.start(t, "slurmctld", "-D", "-f", c.Conf)
	c.WaitFor(t, "slurmctld", func() bool { return c.Run("scontrol", "ping") == nil })
	c.start(t, "slurmd", "-D", "-N", "fl1", "-f", c.Conf)
	c.WaitFor(t, "node fl1 idle", func() bool {
		out, _ := c.Output("sinfo", "-h", "-n", "fl1", "-o", "%t")
		return strings.TrimSpace(out) == "idle"
	})
	return c
}

// Path is a path under the cluster's directory.
func (c *Cluster) Path(p string) string { return filepath.Join(c.Dir, p) }

// Work is the jobs' working directory.
func (c *Cluster) Work() string { return c.Path("work") }

// config is slurm.conf for one node, "fl1" at 127.0.0.1 with 8 CPUs (more
// than the machine may have: config_overrides), no cgroups (proctrack
// linuxproc, task/none), no accounting.
func (c *Cluster) config(t testing.TB) string {
	ports := freePorts(t, 3)
	return fmt.Sprintf(`ClusterName=fltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SrunPortRange=%d-%d
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[5]s/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/log/slurmctld.log
SlurmdLogFile=%[5]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
NodeName=fl1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=fl1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
`, ports[0], ports[1], ports[2], ports[2]+40, c.Dir)
}

// freePorts finds n free TCP ports on 127.0.0.1; the last starts a range
// of 40 for srun's own listeners.
func freePorts(t testing.TB, n int) []int {
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p < 65000 {
			ports = append(ports, p)
		}
	}
	return ports
}

// Env is the environment for Slurm clients of this cluster.
func (c *Cluster) Env() []string {
	return append(os.Environ(), "SLURM_CONF="+c.Conf)
}

func (c *Cluster) start(t testing.TB, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env()
	log, _ := os.Create(c.Path("log/" + name + ".out"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.daemons = append(c.daemons, cmd)
}

// Run runs a Slurm client command (scontrol, squeue, ...).
func (c *Cluster) Run(name string, args ...string) error {
	_, err := c.Output(name, args...)
	return err
}

// Output runs a Slurm client command and returns its combined output.
func (c *Cluster) Output(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// WaitFor polls ok for up to 30 s, failing the test (with the daemons'
// logs) when it never holds.
func (c *Cluster) WaitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok() {
			return
		}
	}
	c.DumpLogs(t)
	t.Fatalf("timed out waiting for %s", what)
}

// Sbatch submits a batch script for ntasks tasks, run in Work, and returns
// the job id; its output goes to log/job-ID.out.
func (c *Cluster) Sbatch(t testing.TB, ntasks int, script string) string {
	t.Helper()
	out, err := c.Output("sbatch", "--parsable", "-n", strconv.Itoa(ntasks), "-D", c.Work(), "-o", c.Path("log/job-%j.out"), "--wrap", script)
	if err != nil {
		c.DumpLogs(t)
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	c.jobs = append(c.jobs, id)
	return id
}

// DumpLogs logs the tails of the daemons' logs.
func (c *Cluster) DumpLogs(t testing.TB) {
	for _, l := range []string{"slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out", "slurmd.out"} {
		b, _ := os.ReadFile(c.Path("log/" + l))
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		t.Logf("== %s\n%s", l, b)
	}
}

// stop cancels the test's jobs, waits for their tasks to end, and stops
// the daemons it started, by their pids.
func (c *Cluster) stop(t testing.TB) {
	for _, j := range c.jobs {
		c.Run("scancel", j)
	}
	for deadline := time.Now().Add(15 * time.Second); len(c.jobs) > 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := c.Output("squeue", "-h", "-o", "%i")
		if err == nil && strings.TrimSpace(out) == "" {
			break
		}
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		d.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			d.Process.Kill()
			<-done
		}
	}
	if !t.Failed() {
		os.RemoveAll(c.Dir)
	} else {
		t.Logf("Slurm state left in %s", c.Dir)
	}
}
