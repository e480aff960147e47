// Package analysis is the one way in: Open reads a crash artifact (an ELF
// core, an NVIDIA GPU core, a crash log; plain, compressed or on standard
// input) into one crash model (schema faultline.crash/v1): threads, frames
// with every inlined level, modules, the signal and faulting instruction,
// the classification, and problems.
//
// The dump is opened and decompressed once (package input), sniffed once
// and dispatched through one table (formats.go) to its reader: package
// native for ELF cores, package cuda for GPU cores, package logs for logs.
// Classification (package classify) runs once, at the end of opening.
//
// It never imports the LSP, git or network code: server/ and gitsrc/ build
// on the model, not the other way round. The model types are defined in
// analysis/model and re-exported here.
package analysis

import "github.com/faultline-dev/faultline/analysis/model"

// The crash model (see package model).
type (
	Crash       = model.Crash
	Dump        = model.Dump
	Signal      = model.Signal
	Thread      = model.Thread
	Trust       = model.Trust
	Frame       = model.Frame
	Module      = model.Module
	Component   = model.Component
	Instruction = model.Instruction
	Problem     = model.Problem
	GPU         = model.GPU
	GPUThread   = model.GPUThread
	Package     = model.Package

	Classification = model.Classification
	LockWait       = model.LockWait
	Finding        = model.Finding
)

// Model constants (see package model).
const (
	Schema            = model.Schema
	SignalFrameName   = model.SignalFrameName
	TrustContext      = model.TrustContext
	TrustCFI          = model.TrustCFI
	TrustFramePointer = model.TrustFramePointer
	TrustScan         = model.TrustScan
	TrustSignal       = model.TrustSignal
)
