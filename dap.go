package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/faultline-dev/faultline/dap"
)

var dapCommand = &command{
	name:  "dap",
	args:  "[--log FILE]",
	short: `post-mortem debug adapter (DAP) over stdio: launch {"coreFile": ...}`,
	long: `Dap runs the post-mortem debug adapter (Debug Adapter Protocol) on standard
input and output, for VS Code's debug type "faultline" and nvim-dap: the dump
comes in the launch request ({"coreFile": ...}). Standard output carries only
the protocol; logs go to standard error or to --log FILE.`,
	examples: []string{"faultline dap", "faultline dap --log /tmp/faultline-dap.log"},
	new:      func() runner { return &dapRun{} },
}

// dapRun is one `faultline dap`.
type dapRun struct{ logFile string }

func (d *dapRun) flags(fs *flag.FlagSet) {
	fs.StringVar(&d.logFile, "log", "", "write logs to FILE instead of stderr")
}

// run runs the debug adapter on stdin/stdout.
func (d *dapRun) run(args []string, _, stderr io.Writer) error {
	if len(args) != 0 {
		return usageError{errors.New("dap takes no arguments (the dump comes in the launch request)")}
	}
	log, closeLog, err := protocolLogger(stderr, d.logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return dap.New(dap.Options{Logger: log, Version: version()}).Serve(ctx, os.Stdin, os.Stdout)
}
