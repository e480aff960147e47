package server

import "github.com/faultline-dev/faultline/sourcelookup"

// resolver is the source lookup shared with the debug adapter
// (sourcelookup: sourceMap, DW_AT_comp_dir, workspace folders and the
// checkout cache, then debuginfod's /source, in gdb's order).
type resolver = sourcelookup.Resolver

// newResolver is the lookup for folders and st; it keeps the files prev
// fetched from debuginfod for the crash that stays open. Offline settings
// fetch nothing.
func newResolver(prev *resolver, folders []string, st Settings) *resolver {
	cfg := sourcelookup.Config{Folders: folders, SourceMap: st.SourceMap, CacheDir: st.CacheDir}
	if !st.Offline {
		cfg.Remote = sourcelookup.DebuginfodFromEnv()
	}
	r := sourcelookup.New(cfg)
	r.KeepFetched(prev)
	return r
}

var (
	isFile     = sourcelookup.IsFile
	abs        = sourcelookup.Abs
	expandHome = sourcelookup.ExpandHome
	localExe   = sourcelookup.Executable
)
