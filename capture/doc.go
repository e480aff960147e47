// Package capture runs jobs and stops live processes to catch their
// crashes: `faultline run` (crash capture turned on for the job, cores
// collected wherever core_pattern sends them, failure rates with Wilson
// intervals over repeated runs, crash bundles) and `faultline hang` (a core
// of a live process written through ptrace with package elfcore's writer,
// and a GPU core requested from the CUDA driver). It prints nothing of its
// own: package main renders what it returns.
package capture
