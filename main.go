// Command faultline analyzes native and GPU crashes: core dumps and crash logs
// become one crash model, shown in a terminal (analyze, demo) or in an editor
// through a language server (serve).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo"
	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
)

const usage = `faultline — crash analysis for native and GPU crashes

usage:
  faultline analyze [--format markdown|text|json] [--json [--summary]] [OPEN FLAGS] DUMP... | DIR
                                 report on one dump, or group many by signature
  faultline sources [--json] [--config FILE] [OPEN FLAGS] DUMP
                                 exact source versions, checkouts and upstream commits
  faultline gpu-lines [--json] CUBIN ADDR...
                                 full inline chains of GPU addresses (KERNEL+0xOFF)
  faultline run [--repeat N] -- CMD ARGS...
                                 run a job with crash capture on, and analyze what it leaves
  faultline hang [--json [--summary]] PID
                                 all-thread stacks of a live, hung process
  faultline job collect JOBID --out DIR [--hang] [--cores DIR] | job report [--json] DIR
                                 a crashed or hung multi-node job through Slurm, merged like STAT
  faultline explain-exit CODE    what a shell exit status means (139, 134, 137, ...)
  faultline demo [--format markdown|text|json]
                                 analyze the bundled crash (a static program and its core)
  faultline serve [--log FILE]   language server over stdio (VS Code, Neovim, ...)
  faultline dap [--log FILE]     post-mortem debug adapter (DAP) over stdio: launch {"coreFile": ...}
  faultline version

OPEN FLAGS: --exe EXE  --sysroot DIR  --debug-dir DIR...  --solib-dir DIR...  --offline
            --debuginfod URL...  --debuginfod-cache DIR  --debuginfod-timeout DUR
            --index-cache DIR|off (default: $FAULTLINE_INDEX_CACHE or ~/.cache/faultline/index)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, ok := commands[args[0]]; {
	case ok:
		err = cmd(args[1:], stdout, stderr)
	case args[0] == "version" || args[0] == "--version":
		fmt.Fprintln(stdout, "faultline", version())
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "faultline: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "faultline %s: %v\n\n%s", args[0], err, usage)
			return 2
		}
		fmt.Fprintf(stderr, "faultline %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// commands maps subcommand names to their implementations; each lives in
// its own file (analyze.go, demo.go, serve.go, ...) and registers itself.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{}

type usageError struct{ error }

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseInterspersed parses flags that may appear before, between or after
// positional arguments, as users type them.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// openFlags are the options every command that opens a dump takes.
type openFlags struct {
	exe, sysroot        string
	debugDirs, solibDir stringList
	offline             bool
	debuginfod          stringList
	debuginfodCache     string
	debuginfodTimeout   time.Duration
	indexCache          string
}

func (o *openFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.exe, "exe", "", "the crashed program's executable, when the core's path is not it")
	fs.StringVar(&o.sysroot, "sysroot", "", "directory holding the crashed machine's files (its /usr/lib/...)")
	fs.Var(&o.debugDirs, "debug-dir", "directory with separate debug files (.build-id/ or debuglink); repeatable")
	fs.Var(&o.solibDir, "solib-dir", "directory searched by file name for mapped libraries; repeatable")
	fs.BoolVar(&o.offline, "offline", false, "no network: no debuginfod, no git fetches (sources uses only its cache)")
	fs.Var(&o.debuginfod, "debuginfod", "debuginfod server URL (default: $DEBUGINFOD_URLS); repeatable")
	fs.StringVar(&o.debuginfodCache, "debuginfod-cache", "", "debuginfod download cache (default: $DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client)")
	fs.DurationVar(&o.debuginfodTimeout, "debuginfod-timeout", 0, "per-request debuginfod timeout (default: $DEBUGINFOD_TIMEOUT seconds or 10s)")
	fs.StringVar(&o.indexCache, "index-cache", "", "persistent cache of decompressed debug sections, DIR or off (default: $FAULTLINE_INDEX_CACHE or $XDG_CACHE_HOME/faultline/index)")
}

func (o *openFlags) options() analysis.Options {
	if o.indexCache != "" {
		max, _ := indexcache.ParseSize(os.Getenv(indexcache.EnvMaxBytes))
		debuginfo.SetIndexCache(indexcache.Resolve(o.indexCache, max))
	}
	return analysis.Options{Exe: o.exe, Sysroot: o.sysroot, DebugDirs: o.debugDirs, SearchDirs: o.solibDir,
		Offline: o.offline, DebuginfodURLs: o.debuginfod, DebuginfodCache: o.debuginfodCache,
		DebuginfodTimeout: o.debuginfodTimeout}
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
		if v != "" && v != "(devel)" {
			return v
		}
	}
	return "devel"
}
