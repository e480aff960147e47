package server

import "github.com/faultline-dev/faultline/sourcelookup"

// resolver is the source lookup shared with the debug adapter
// (sourcelookup: sourceMap, DW_AT_comp_dir, workspace folders and the
// checkout cache, in gdb's order).
type resolver = sourcelookup.Resolver

func newResolver(folders []string, st Settings) *resolver {
	return sourcelookup.New(sourcelookup.Config{Folders: folders, SourceMap: st.SourceMap, CacheDir: st.CacheDir})
}

var (
	isFile     = sourcelookup.IsFile
	abs        = sourcelookup.Abs
	expandHome = sourcelookup.ExpandHome
)
