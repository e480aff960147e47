package server

import (
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzParseSettings: initializationOptions and didChangeConfiguration come
// from the client; any bytes give settings or an error, never a panic.
func FuzzParseSettings(f *testing.F) {
	f.Add([]byte(`{"dumps":["core.gz",{"dump":"c","exe":"e"}],"sourceMap":{"/b":"/l"},"cacheDir":"~/c","offline":true,"debugDirs":["/d"]}`))
	f.Add([]byte(`{"faultline":{"sourceMap":{"/build":"/src"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			st, err := parseSettings(b)
			if err != nil {
				return
			}
			r := newResolver(nil, []string{t.TempDir()}, st)
			r.Lookup("a/b.c")
		})
	})
}
