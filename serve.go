package main

import (
	"errors"
	"flag"
	"io"
	"os"

	"github.com/faultline-dev/faultline/server"
)

var serveCommand = &command{
	name:  "serve",
	args:  protocolArgs,
	short: "language server over stdio (VS Code, Neovim, ...)",
	long: `Serve runs the language server on standard input and output: an editor opens a
dump and shows the crash on the source (diagnostics, hovers, code lenses, frame
values). Standard output carries only the protocol; logs go to standard error
or to --log FILE (FAULTLINE_DEBUG=1 for debug logs).`,
	examples: []string{"faultline serve", "faultline serve --log /tmp/faultline.log"},
	new:      func() runner { return &serveRun{} },
}

// serveRun is one `faultline serve`.
type serveRun struct{ protocol protocolFlags }

func (s *serveRun) flags(fs *flag.FlagSet) { s.protocol.register(fs) }

// run runs the language server on stdin/stdout.
func (s *serveRun) run(args []string, _, stderr io.Writer) error {
	ctx, log, done, err := s.protocol.start(args, stderr, "serve takes no arguments")
	if err != nil {
		return err
	}
	defer done()
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
