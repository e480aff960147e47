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

func init() { commands["dap"] = cmdDAP }

// cmdDAP runs the post-mortem debug adapter on stdin/stdout (VS Code's
// debug type "faultline", nvim-dap). stdout carries only the protocol;
// logs go to stderr, or to --log FILE.
func cmdDAP(args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("dap", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	logFile := fs.String("log", "", "write logs to FILE instead of stderr")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 0 {
		return usageError{errors.New("dap takes no arguments (the dump comes in the launch request)")}
	}
	log, closeLog, err := protocolLogger(stderr, *logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return dap.New(dap.Options{Logger: log, Version: version()}).Serve(ctx, os.Stdin, os.Stdout)
}
