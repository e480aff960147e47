package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// commandFlags are the flags each command's --help must list.
var commandFlags = map[string][]string{
	"analyze":      {"format", "json", "exe", "sysroot", "debug-dir", "solib-dir", "offline", "debuginfod"},
	"sources":      {"json", "config", "fix", "cache-dir", "offline", "exe"},
	"gpu-lines":    {"json", "arch"},
	"run":          {"repeat", "out", "json"},
	"hang":         {"out", "format", "no-gpu"},
	"explain-exit": {},
	"demo":         {"format", "json"},
	"serve":        {"log"},
	"version":      {},
	"dap":          {"log"},
	"job":          {},
}

// TestCommandHelp runs `faultline CMD --help` (and -h) for every command
// the top-level usage lists: its own usage with its flags on stdout, exit 0.
func TestCommandHelp(t *testing.T) {
	for _, cmd := range listedCommands(t) {
		for _, h := range []string{"--help", "-h"} {
			r := faultline(t, invocation{}, cmd, h)
			if r.code != 0 || !strings.Contains(r.stdout, "faultline "+cmd) {
				t.Errorf("faultline %s %s: want its usage on stdout and exit 0\n%s", cmd, h, r)
				continue
			}
			for _, f := range commandFlags[cmd] {
				if !regexp.MustCompile(`-` + regexp.QuoteMeta(f) + `\b`).MatchString(r.stdout) {
					t.Errorf("faultline %s %s does not list -%s:\n%s", cmd, h, f, r.stdout)
				}
			}
		}
	}
}
