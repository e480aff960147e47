package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/input"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// openFlags are the options every command that opens a dump takes.
type openFlags struct {
	exe, sysroot        string
	debugDirs, solibDir stringList
	offline             bool
	debuginfod          stringList
	debuginfodCache     string
	debuginfodTimeout   time.Duration
	indexCache          string
	maxDecompressed     int64
	// warn, when set, receives what the analysis could not do as asked
	// (analysis.Options.Warn).
	warn func(string)
}

func (o *openFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.exe, "exe", "", "the crashed program's executable, when the core's path is not it")
	fs.StringVar(&o.sysroot, "sysroot", "", "directory holding the crashed machine's files (its /usr/lib/...)")
	fs.Var(&o.debugDirs, "debug-dir", "directory with separate debug files (.build-id/ or debuglink); repeatable")
	fs.Var(&o.solibDir, "solib-dir", "directory searched by file name for mapped libraries; repeatable")
	fs.BoolVar(&o.offline, "offline", false, "no network: no debuginfod, no git fetches (sources uses only its cache)")
	fs.Var(&o.debuginfod, "debuginfod", "debuginfod server URL (default: $DEBUGINFOD_URLS); repeatable")
	fs.StringVar(&o.debuginfodCache, "debuginfod-cache", "", "debuginfod download cache (default: $DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client)")
	fs.DurationVar(&o.debuginfodTimeout, "debuginfod-timeout", 0, "skip a debuginfod server that sends less than 100 KiB a second for this long (default: $DEBUGINFOD_TIMEOUT seconds or 10s)")
	fs.Int64Var(&o.maxDecompressed, "max-decompressed", input.MaxPlainBytes, "bytes a compressed dump (or stdin) may inflate to in $TMPDIR")
	fs.StringVar(&o.indexCache, "index-cache", "", "persistent cache of decompressed debug sections, DIR or off (default: $FAULTLINE_INDEX_CACHE or $XDG_CACHE_HOME/faultline/index)")
}

func (o *openFlags) options() analysis.Options {
	if o.maxDecompressed > 0 {
		input.MaxPlainBytes = o.maxDecompressed
	}
	if o.indexCache != "" {
		max, _ := indexcache.ParseSize(os.Getenv(indexcache.EnvMaxBytes))
		object.SetIndexCache(indexcache.Resolve(o.indexCache, max))
	}
	return analysis.Options{Exe: o.exe, Sysroot: o.sysroot, DebugDirs: o.debugDirs, SearchDirs: o.solibDir,
		Offline: o.offline, DebuginfodURLs: o.debuginfod, DebuginfodCache: o.debuginfodCache,
		DebuginfodTimeout: o.debuginfodTimeout, Warn: o.warn}
}

// formatFlags are --format and --json of the commands that print a report.
type formatFlags struct {
	format string
	json   bool
}

func (f *formatFlags) register(fs *flag.FlagSet, def, formatUsage, jsonUsage string) {
	f.format = def
	fs.StringVar(&f.format, "format", def, formatUsage)
	fs.BoolVar(&f.json, "json", false, jsonUsage)
}

// parse returns the report format: "markdown" (also "md"), "text" or
// "json" (also --json).
func (f *formatFlags) parse() (string, error) {
	if f.json {
		return "json", nil
	}
	switch f.format {
	case "markdown", "md":
		return "markdown", nil
	case "text", "json":
		return f.format, nil
	}
	return "", usageError{fmt.Errorf("unknown --format %q (markdown, text or json)", f.format)}
}

// writeReport renders one crash in format (see formatFlags.parse).
func writeReport(w io.Writer, c *model.Crash, format string) error {
	switch format {
	case "json":
		return report.JSON(w, c)
	case "text":
		return report.Text(w, c)
	}
	return report.Markdown(w, c, "")
}
