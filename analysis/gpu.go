package analysis

// NOTE to the GPU work: the model's GPU section moved to analysis/model/gpu.go
// (package model, re-exported here as analysis.GPU); extend it there. This
// file is removed at integration.
