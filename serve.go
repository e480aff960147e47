package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/faultline-dev/faultline/server"
)

func init() { commands["serve"] = cmdServe }

// cmdServe runs the language server on stdin/stdout. stdout carries only
// the protocol; logs go to stderr, or to --log FILE.
func cmdServe(args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	logFile := fs.String("log", "", "write logs to FILE instead of stderr")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 0 {
		return usageError{errors.New("serve takes no arguments")}
	}
	log, closeLog, err := protocolLogger(stderr, *logFile)
	if err != nil {
		return err
	}
	defer closeLog()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := server.New(server.Options{Logger: log, Version: version(), Values: server.SessionValues})
	err = srv.Serve(ctx, stdio{os.Stdin, os.Stdout})
	if errors.Is(err, server.ErrExitWithoutShutdown) {
		// LSP 3.17 §"Exit Notification": exit code 1 without a prior shutdown.
		return errors.New("exit without shutdown")
	}
	return err
}

// stdio joins stdin and stdout into the server's stream.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	os.Stdin.Close()
	return os.Stdout.Close()
}
