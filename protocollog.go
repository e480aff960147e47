package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// protocolArgs is the usage line of a command whose stdout carries a
// protocol.
const protocolArgs = "[--log FILE]"

// protocolFlags are the flags and the setup shared by the commands whose
// stdout carries a protocol (serve, dap): --log, no arguments, a logger
// off stdout, and a context that SIGTERM or SIGINT cancels.
type protocolFlags struct{ logFile string }

func (p *protocolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.logFile, "log", "", "write logs to FILE instead of stderr")
}

// start refuses arguments (noArgs says why) and opens the logger and the
// signal context; done flushes the log and stops listening for signals.
func (p *protocolFlags) start(args []string, stderr io.Writer, noArgs string) (ctx context.Context, log *zap.Logger, done func(), err error) {
	if len(args) != 0 {
		return nil, nil, nil, usageError{errors.New(noArgs)}
	}
	log, closeLog, err := protocolLogger(stderr, p.logFile)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	return ctx, log, func() { stop(); closeLog() }, nil
}

// protocolLogger is the logger of a command whose stdout carries a
// protocol (serve, dap): to stderr, or appended to logFile. Debug level
// with FAULTLINE_DEBUG set. The returned func flushes and closes it.
func protocolLogger(stderr io.Writer, logFile string) (*zap.Logger, func(), error) {
	sink := zapcore.AddSync(stderr)
	var f *os.File
	if logFile != "" {
		var err error
		f, err = os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, err
		}
		sink = zapcore.AddSync(f)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	level := zapcore.InfoLevel
	if os.Getenv("FAULTLINE_DEBUG") != "" {
		level = zapcore.DebugLevel
	}
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(sink), level))
	return log, func() {
		log.Sync()
		if f != nil {
			f.Close()
		}
	}, nil
}
