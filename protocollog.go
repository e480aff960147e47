package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

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
