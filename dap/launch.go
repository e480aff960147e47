package dap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	godap "github.com/google/go-dap"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/regular"
	"github.com/faultline-dev/faultline/sourcelookup"
)

// LaunchArgs are the launch configuration's attributes ("type":
// "faultline", "request": "launch"), named as cpptools ("coreDumpPath" is
// accepted for coreFile) and CodeLLDB name them.
type LaunchArgs struct {
	// CoreFile is the dump: an ELF core (gzip'd or not), a GPU core dump or
	// a crash log faultline reads.
	CoreFile string `json:"coreFile"`
	// CoreDumpPath is cpptools' name for CoreFile.
	CoreDumpPath string `json:"coreDumpPath,omitempty"`
	// Program is the crashed executable, when the core's recorded path is
	// not it.
	Program string `json:"program,omitempty"`
	// Sysroot holds the crashed machine's files (its /usr/lib/...).
	Sysroot string `json:"sysroot,omitempty"`
	// SourceMap maps build-machine path prefixes to local directories.
	SourceMap map[string]string `json:"sourceMap,omitempty"`
	// DebugDirs hold separate debug files.
	DebugDirs []string `json:"debugDirs,omitempty"`
	// Cwd resolves relative paths above (default: the adapter's cwd).
	Cwd string `json:"cwd,omitempty"`
	// WorkspaceFolders are searched for sources after the compilation
	// directory (VS Code passes ${workspaceFolder}).
	WorkspaceFolders []string `json:"workspaceFolders,omitempty"`
	// Offline forbids network access: no debug files and no sources from
	// debuginfod (DEBUGINFOD_URLS is ignored), as `analyze --offline`.
	Offline bool `json:"offline,omitempty"`
}

func (s *Server) onLaunch(req *godap.LaunchRequest) {
	if s.model != nil {
		s.errorResponse(&req.Request, errLaunch, "a dump is already open in this session")
		return
	}
	var args LaunchArgs
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		s.errorResponse(&req.Request, errBadArguments, "bad launch arguments: %v", err)
		return
	}
	v, err := s.open(args)
	if err != nil {
		s.errorResponse(&req.Request, errLaunch, "%v", err)
		return
	}
	s.model = v
	s.sess = v.sess
	s.send(&godap.LaunchResponse{Response: response(&req.Request)})
	for _, p := range v.crash.Problems {
		s.output("console", "faultline: "+p.Message+"\n")
	}
	s.maybeStop()
}

// open checks the launch arguments and opens the dump.
func (s *Server) open(args LaunchArgs) (*crashView, error) {
	if args.CoreFile == "" {
		args.CoreFile = args.CoreDumpPath
	}
	if args.CoreFile == "" {
		return nil, fmt.Errorf(`launch needs "coreFile": the core dump to open`)
	}
	cwd := args.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	absIn := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, sourcelookup.ExpandHome(p))
	}
	core, program, sysroot := absIn(args.CoreFile), absIn(args.Program), absIn(args.Sysroot)
	if fi, err := os.Stat(core); err != nil {
		return nil, fmt.Errorf("cannot read coreFile: %w", err)
	} else if !fi.Mode().IsRegular() && !analysis.IsProblemDirectory(core) {
		// A FIFO would block the open, a device never end; the open below
		// checks the opened file again (regular.Open). An ABRT problem
		// directory is opened by its coredump.
		return nil, fmt.Errorf("coreFile %s is %s, not a regular file", core, regular.Kind(fi.Mode()))
	}
	if program != "" && !sourcelookup.IsFile(program) {
		return nil, fmt.Errorf("program %s does not exist", program)
	}
	if sysroot != "" {
		if fi, err := os.Stat(sysroot); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("sysroot %s is not a directory", sysroot)
		}
	}
	var debugDirs []string
	for _, d := range args.DebugDirs {
		debugDirs = append(debugDirs, absIn(d))
	}
	sess, err := analysis.OpenSession(core, analysis.Options{Exe: program, Sysroot: sysroot, DebugDirs: debugDirs,
		Offline: args.Offline})
	if err != nil {
		return nil, err
	}
	folders := make([]string, 0, len(args.WorkspaceFolders))
	for _, f := range args.WorkspaceFolders {
		folders = append(folders, absIn(f))
	}
	cfg := sourcelookup.Config{Folders: folders, SourceMap: args.SourceMap}
	if !args.Offline {
		cfg.Remote = sourcelookup.DebuginfodFromEnv()
	}
	res := sourcelookup.New(cfg)
	exe := program
	if exe == "" {
		exe = sourcelookup.Executable(sess.Crash)
	}
	// gdb's last step: frame files not on this machine from debuginfod.
	if n, err := res.Fetch(context.Background(), sess.Crash, exe); n > 0 || err != nil {
		s.log.Info("debuginfod sources", zap.Int("fetched", n), zap.Error(err))
	}
	s.log.Info("opened dump", zap.String("core", core), zap.Int("threads", len(sess.Crash.Threads)))
	return newCrashView(sess, res, exe), nil
}

// maybeStop sends the stop once the dump is open and the client has
// finished configuring (or never will: it did not get the capability).
func (s *Server) maybeStop() {
	if s.model == nil || !s.configured || s.stopSent {
		return
	}
	s.stopSent = true
	v := s.model
	desc, text := stopDescription(v.crash)
	ev := &godap.StoppedEvent{Event: event("stopped")}
	ev.Body = godap.StoppedEventBody{Reason: "exception", Description: desc, Text: text,
		ThreadId: v.stopped, AllThreadsStopped: true}
	s.send(ev)
}

// stopDescription is the stop's one-line description and its detail.
func stopDescription(c *analysis.Crash) (string, string) {
	desc := "Crashed"
	if c.Signal != nil {
		desc = "Crashed: " + c.Signal.Name
	}
	text := ""
	if cl := c.Classification; cl != nil {
		desc += " (" + cl.Kind + ")"
		text = cl.Summary
	}
	return desc, text
}

// output sends an output event.
func (s *Server) output(category, text string) {
	ev := &godap.OutputEvent{Event: event("output")}
	ev.Body = godap.OutputEventBody{Category: category, Output: text}
	s.send(ev)
}
