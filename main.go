// Command faultline analyzes native and GPU crashes: core dumps and crash logs
// become one crash model, shown in a terminal (analyze, demo) or in an editor
// through a language server (serve).
//
// The commands are listed in one table (commands, below), as cmd/go lists
// its own: each command owns its flag set, usage text and examples, and
// `faultline CMD --help` prints them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// A command is one faultline subcommand.
type command struct {
	name     string
	args     string   // what follows the name on the usage line
	short    string   // its line in `faultline help`
	long     string   // what `faultline NAME --help` explains
	examples []string // command lines, shown as they are typed
	// interspersed commands take flags before, between and after their
	// arguments; the others stop at the first argument (run -- CMD).
	interspersed bool
	// ownArgs commands parse their arguments themselves (job's
	// subcommands); only a lone --help is theirs to show.
	ownArgs bool
	// new makes one invocation: it defines its flags, then runs.
	new func() runner
}

// A runner is one invocation of a command.
type runner interface {
	// flags defines the command's flags on fs.
	flags(fs *flag.FlagSet)
	// run runs with the arguments left after the flags.
	run(args []string, stdout, stderr io.Writer) error
}

// commands are faultline's subcommands, in the order help lists them.
var commands = []*command{
	analyzeCommand,
	sourcesCommand,
	gpuLinesCommand,
	runCommand,
	hangCommand,
	jobCommand,
	explainExitCommand,
	demoCommand,
	serveCommand,
	dapCommand,
	versionCommand,
}

// openFlagsUsage explains the flags of every command that opens a dump.
const openFlagsUsage = `OPEN FLAGS: --exe EXE  --sysroot DIR  --debug-dir DIR...  --solib-dir DIR...  --offline
            --debuginfod URL...  --debuginfod-cache DIR  --debuginfod-timeout DUR
            --index-cache DIR|off (default: $FAULTLINE_INDEX_CACHE or ~/.cache/faultline/index)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status: 0, 1 when
// the command failed, 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				c.printUsage(stdout, c.flagSet(c.new()))
				return 0
			}
		}
		fmt.Fprint(stdout, usage())
		return 0
	case "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "faultline: unknown command %q\nRun 'faultline help' for usage.\n", name)
		return 2
	}
	return c.main(args[1:], stdout, stderr)
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// usage is `faultline help`: every command's usage line and summary.
func usage() string {
	var b strings.Builder
	b.WriteString("faultline — crash analysis for native and GPU crashes\n\nusage:\n")
	const column = 33
	for _, c := range commands {
		line := "  faultline " + c.name
		if c.args != "" {
			line += " " + c.args
		}
		switch {
		case c.short == "":
			b.WriteString(line + "\n")
		case len(line) < column-2:
			b.WriteString(line + strings.Repeat(" ", column-len(line)) + c.short + "\n")
		default:
			b.WriteString(line + "\n" + strings.Repeat(" ", column) + c.short + "\n")
		}
	}
	b.WriteString("\n" + openFlagsUsage)
	return b.String()
}

// flagSet makes the command's flag set with r's flags.
func (c *command) flagSet(r runner) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r.flags(fs)
	return fs
}

// main runs the command with its arguments and returns the exit status.
func (c *command) main(args []string, stdout, stderr io.Writer) int {
	r := c.new()
	fs := c.flagSet(r)
	pos, err := c.parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printUsage(stdout, fs)
		return 0
	}
	if err != nil {
		err = usageError{err}
	} else {
		err = r.run(pos, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	var status jobStatus
	if errors.As(err, &status) {
		return int(status) // faultline run: the job's status, already reported
	}
	var ue usageError
	if errors.As(err, &ue) {
		// As cmd/go: the error, the one usage line, where the rest is.
		fmt.Fprintf(stderr, "faultline %s: %v\n", c.name, err)
		if !c.ownArgs { // those name their own help
			fmt.Fprintf(stderr, "%s\nRun 'faultline %s --help' for details.\n", c.usageLine(), c.name)
		}
		return 2
	}
	fmt.Fprintf(stderr, "faultline %s: %v\n", c.name, err)
	return 1
}

// parse parses the flags and returns the arguments.
func (c *command) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if c.ownArgs {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return nil, flag.ErrHelp
		}
		return args, nil
	}
	if !c.interspersed {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return fs.Args(), nil
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// printUsage prints `faultline NAME --help`: the usage line, what the
// command does, its flags and examples.
func (c *command) printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n", c.usageLine())
	if c.long != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(c.long))
	} else {
		fmt.Fprintf(w, "%s\n", c.short)
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// usageLine is "usage: faultline NAME ARGS".
func (c *command) usageLine() string {
	return strings.TrimSpace("usage: faultline " + c.name + " " + c.args)
}

// usageError is a command line the command cannot run: exit status 2,
// with the command's usage line.
type usageError struct{ error }
