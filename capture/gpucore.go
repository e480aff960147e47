package capture

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// RequestGPUCore asks the CUDA driver of process pid for a GPU core dump:
// with CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 the driver creates the named
// pipe CUDA_COREDUMP_PIPE (default corepipe.cuda.HOSTNAME.PID) and writes a
// dump when something writes to it (cuda-gdb documentation, "GPU core dump
// support"). It returns what happened, in a sentence.
func RequestGPUCore(pid int) string {
	env := processEnv(pid)
	if env["CUDA_ENABLE_USER_TRIGGERED_COREDUMP"] != "1" {
		return "no GPU core requested: the process was not started with CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 (faultline run sets it)"
	}
	host, _ := os.Hostname()
	pipe := env["CUDA_COREDUMP_PIPE"]
	if pipe == "" {
		pipe = "corepipe.cuda.%h.%p"
	}
	pipe = strings.NewReplacer("%h", host, "%p", strconv.Itoa(pid), "%%", "%").Replace(pipe)
	if !filepath.IsAbs(pipe) {
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		pipe = filepath.Join(cwd, pipe)
	}
	st, err := os.Stat(pipe)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return fmt.Sprintf("no GPU core requested: no CUDA coredump pipe at %s (the process has not initialised CUDA?)", pipe)
	}
	// O_NONBLOCK: fail at once (ENXIO) rather than hang when nobody reads.
	f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Sprintf("no GPU core requested: opening %s: %v", pipe, err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil && !errors.Is(err, syscall.EAGAIN) {
		return fmt.Sprintf("GPU core request through %s failed: %v", pipe, err)
	}
	where := env["CUDA_COREDUMP_FILE"]
	if where == "" {
		where = "core_TIME_HOSTNAME_PID.nvcudmp in its working directory"
	}
	return fmt.Sprintf("requested a GPU core dump through %s; the driver writes it to %s", pipe, where)
}

// processEnv reads /proc/PID/environ.
func processEnv(pid int) map[string]string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}
