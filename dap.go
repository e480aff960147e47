package main

import (
	"flag"
	"io"
	"os"

	"github.com/faultline-dev/faultline/dap"
)

var dapCommand = &command{
	name:  "dap",
	args:  protocolArgs,
	short: `post-mortem debug adapter (DAP) over stdio: launch {"coreFile": ...}`,
	long: `Dap runs the post-mortem debug adapter (Debug Adapter Protocol) on standard
input and output, for VS Code's debug type "faultline" and nvim-dap: the dump
comes in the launch request ({"coreFile": ...}). Standard output carries only
the protocol; logs go to standard error or to --log FILE.`,
	examples: []string{"faultline dap", "faultline dap --log /tmp/faultline-dap.log"},
	new:      func() runner { return &dapRun{} },
}

// dapRun is one `faultline dap`.
type dapRun struct{ protocol protocolFlags }

func (d *dapRun) flags(fs *flag.FlagSet) { d.protocol.register(fs) }

// run runs the debug adapter on stdin/stdout.
func (d *dapRun) run(args []string, _, stderr io.Writer) error {
	ctx, log, done, err := d.protocol.start(args, stderr, "dap takes no arguments (the dump comes in the launch request)")
	if err != nil {
		return err
	}
	defer done()
	return dap.New(dap.Options{Logger: log, Version: version()}).Serve(ctx, os.Stdin, os.Stdout)
}
