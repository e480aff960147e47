package gitsrc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ConfigFileName is the configuration file looked up at a workspace root.
const ConfigFileName = "faultline.json"

// maxConfigSize caps the configuration file that is read.
const maxConfigSize = 4 << 20

// Config is the contract of faultline.json:
//
//	{"components": [{"module": "<regexp on the module path>", "name"?: "...",
//	                 "repo": "<git URL>", "revision": "<tag, branch or commit>"}],
//	 "sourceMap"?: {"from": "to"}}
type Config struct {
	Components []ComponentRule   `json:"components"`
	SourceMap  map[string]string `json:"sourceMap,omitempty"`
	// CacheDir overrides the cache directory.
	CacheDir string `json:"cacheDir,omitempty"`

	// dir is the directory of the file, for relative sourceMap targets.
	dir string
	// notes say what of a found file was not trusted (FindConfig).
	notes []string
}

// ComponentRule says which repository and revision the modules whose path
// matches Module were built from.
type ComponentRule struct {
	Module   string `json:"module"`
	Name     string `json:"name,omitempty"`
	Repo     string `json:"repo"`
	Revision string `json:"revision"`

	re *regexp.Regexp
}

// LoadConfig reads and validates a configuration file.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigSize)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if abs, err := filepath.Abs(filepath.Dir(path)); err == nil {
		c.dir = abs
	}
	return c, nil
}

// FindConfig loads faultline.json from the workspace directory; it returns
// nil and no error when there is none.
//
// A found file is not trusted as one passed with --config is: whoever can
// put a file in a checkout or a working directory controls it. It may add
// component rules and source maps, but not choose where faultline writes:
// its cacheDir is dropped (Notes says so). Write locations come only from
// flags, the user's settings or an explicitly named config.
func FindConfig(workspace string) (*Config, error) {
	path := filepath.Join(workspace, ConfigFileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	c, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if c.CacheDir != "" {
		c.notes = append(c.notes, fmt.Sprintf("%s: cacheDir %q ignored: a %s found in a working directory or workspace folder "+
			"may add rules but not choose where faultline writes (name it with --config, or use --cache-dir or the cacheDir setting)",
			path, c.CacheDir, ConfigFileName))
		c.CacheDir = ""
	}
	return c, nil
}

// Notes are what was ignored of a found configuration file, for the user.
func (c *Config) Notes() []string {
	if c == nil {
		return nil
	}
	return c.notes
}

// ParseConfig parses and validates configuration JSON. Unknown fields are
// errors, so that a misspelt key does not silently do nothing.
func ParseConfig(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	for i := range c.Components {
		r := &c.Components[i]
		if r.Module == "" || r.Repo == "" || r.Revision == "" {
			return nil, fmt.Errorf("components[%d]: module, repo and revision are required", i)
		}
		re, err := regexp.Compile(r.Module)
		if err != nil {
			return nil, fmt.Errorf("components[%d].module: %w", i, err)
		}
		r.re = re
		if strings.ContainsAny(r.Revision, " \t\n~^:?*[\\") {
			return nil, fmt.Errorf("components[%d].revision %q is not a tag, branch or commit", i, r.Revision)
		}
	}
	for from, to := range c.SourceMap {
		if from == "" || to == "" {
			return nil, errors.New("sourceMap: empty path")
		}
	}
	return &c, nil
}

// rule returns the first component rule matching a module path.
func (c *Config) rule(module string) *ComponentRule {
	if c == nil {
		return nil
	}
	for i := range c.Components {
		r := &c.Components[i]
		if r.re == nil {
			re, err := regexp.Compile(r.Module)
			if err != nil {
				continue
			}
			r.re = re
		}
		if r.re.MatchString(module) {
			return r
		}
	}
	return nil
}
