package server

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Settings are the server's options, from initializationOptions and
// workspace/didChangeConfiguration (either bare or under a "faultline" key):
//
//	{"dumps": ["core.gz", {"dump": "core", "exe": "bin/app"}],
//	 "sourceMap": {"/build/prefix": "/local/checkout"},
//	 "cacheDir": "~/.cache/faultline", "offline": false,
//	 "debugDirs": ["/usr/lib/debug"]}
type Settings struct {
	// Dumps are opened after initialized, in order; the last one stays shown.
	Dumps []OpenArgs `json:"dumps,omitempty"`
	// SourceMap rewrites build-path prefixes to local directories; the
	// rules also go to faultline.fetchSources, over faultline.json's.
	SourceMap map[string]string `json:"sourceMap,omitempty"`
	// CacheDir holds source checkouts (searched for frame files), the git
	// cache of faultline.fetchSources and reports. Default:
	// gitsrc.DefaultCacheDir() for sources (a workspace's faultline.json may
	// not choose it), the user cache directory for reports.
	CacheDir string `json:"cacheDir,omitempty"`
	// Offline forbids network access (debuginfod, git remotes):
	// faultline.fetchSources uses only what the cache holds.
	Offline bool `json:"offline,omitempty"`
	// DebugDirs hold separate debug files (.build-id/ trees, debuglink targets).
	DebugDirs []string `json:"debugDirs,omitempty"`
}

// OpenArgs is the argument of faultline.open: {"dump": path, "exe"?: path,
// "sysroot"?: dir}.
type OpenArgs struct {
	Dump    string `json:"dump"`
	Exe     string `json:"exe,omitempty"`
	Sysroot string `json:"sysroot,omitempty"`
}

// UnmarshalJSON accepts the object form and a bare path string.
func (a *OpenArgs) UnmarshalJSON(b []byte) error {
	var path string
	if json.Unmarshal(b, &path) == nil {
		*a = OpenArgs{Dump: path}
		return nil
	}
	type plain OpenArgs
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf(`want {"dump": path, "exe"?: path, "sysroot"?: dir}: %w`, err)
	}
	*a = OpenArgs(p)
	return nil
}

// parseSettings reads settings from raw JSON, unwrapping {"faultline": {...}}.
// Absent or null input yields zero settings.
func parseSettings(raw []byte) (Settings, error) {
	raw = bytes.TrimSpace(raw)
	var st Settings
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return st, nil
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return st, fmt.Errorf("faultline settings: %w", err)
	}
	if inner, ok := wrapped["faultline"]; ok {
		raw = inner
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("faultline settings: %w", err)
	}
	return st, nil
}
