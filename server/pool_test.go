package server_test

import (
	"reflect"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/faultline-dev/faultline/server"
)

// TestModulePoolAcrossOpens: a second faultline.open of the same core
// takes its program's files from the server's module pool instead of
// opening them again, with the same diagnostics; opening another program's
// core then closes the first program's files the shown dump no longer
// uses.
func TestModulePoolAcrossOpens(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	e := newEnv(t, map[string]any{}, server.Options{Logger: zap.New(core)})
	seen := 0
	pool := func() (reused, dropped int) {
		t.Helper()
		entries := logs.FilterMessage("module pool").All()
		if len(entries) != seen+1 {
			t.Fatalf("%d module pool logs after %d pooled opens", len(entries), seen+1)
		}
		seen++
		f := entries[len(entries)-1].ContextMap()
		return int(f["reused"].(int64)), int(f["dropped"].(int64))
	}
	first := e.OpenDump("null_inline")
	diags := e.Diagnostics(e.URI("null_inline.c"))
	if reused, _ := pool(); reused != 0 {
		t.Errorf("the first open reused %d pooled files", reused)
	}
	second := e.OpenDump("null_inline")
	if reused, dropped := pool(); reused == 0 || dropped != 0 {
		t.Errorf("the second open of the same core reused %d files and dropped %d, want some and none", reused, dropped)
	}
	if !reflect.DeepEqual(first, second) || !reflect.DeepEqual(diags, e.Diagnostics(e.URI("null_inline.c"))) {
		t.Errorf("the pooled open shows another crash: %+v, want %+v", second, first)
	}
	e.OpenDump("recursion")
	if _, dropped := pool(); dropped == 0 {
		t.Error("opening another program's core closed none of the first program's files")
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
