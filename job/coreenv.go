package job

import (
	"bytes"

	"github.com/faultline-dev/faultline/analysis/elfcore"
)

// maxEnvironBytes caps how much of a core's stack top is read for the
// environment strings.
const maxEnvironBytes = 1 << 20

// CoreEnv reads the crashed process's environment from its core: the kernel
// copies the environment strings onto the top of the initial stack, just
// below the executable's name that AT_EXECFN points to, so they are in
// every core that kept the stack. It returns the variables Info reads
// (empty when the stack top is not in the core).
func CoreEnv(path string) (map[string]string, error) {
	c, err := elfcore.Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return environBelowExecFn(c), nil
}

func environBelowExecFn(c *elfcore.Core) map[string]string {
	env := map[string]string{}
	top, ok := c.AuxVal(elfcore.AT_EXECFN)
	if !ok {
		return env
	}
	start := top - min(top, maxEnvironBytes)
	for _, s := range c.Segments {
		if s.Vaddr <= top && top < s.End() && s.Vaddr > start {
			start = s.Vaddr
		}
	}
	b, err := c.Slice(start, top-start)
	if err != nil {
		return env
	}
	b = bytes.TrimSuffix(b, []byte{0})
	// Walk the strings down from the top: environment strings end where the
	// first string that is not KEY=VALUE (the last argument) begins.
	for len(b) > 0 {
		i := bytes.LastIndexByte(b, 0)
		kv := b[i+1:]
		k, v, ok := bytes.Cut(kv, []byte{'='})
		if !ok || len(k) == 0 || !validEnvName(k) {
			break
		}
		if isEnvKey(string(k)) {
			env[string(k)] = string(v) // walking down: the first copy wins, as with getenv
		}
		if i < 0 {
			break
		}
		b = b[:i]
	}
	return env
}

func validEnvName(k []byte) bool {
	for _, c := range k {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
