// Package analysis turns a crash artifact into one crash model
// (schema faultline.crash/v1): threads, frames with every inlined level,
// modules, the signal and faulting instruction, and problems.
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
