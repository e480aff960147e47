package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/faultline-dev/faultline"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string // direct imports
	Deps       []string // every package it depends on, transitively
}

// listPackages lists every package of the module with its imports.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

func local(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// A rule forbids the packages it applies to some imports.
type rule struct {
	why     string
	applies func(p string) bool // p: the package, relative to the module
	deps    bool                // check every dependency, not only direct imports
	forbids func(imp string) bool
}

// rules are ARCHITECTURE.md's package rules.
var rules = []rule{
	{
		why:     "analysis (the engine) never depends on the editor, git, job or capture code, nor on their libraries",
		applies: func(p string) bool { return under(p, "analysis") },
		deps:    true,
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && (under(l, "server") || under(l, "dap") || under(l, "gitsrc") ||
				under(l, "job") || under(l, "capture") || under(l, "sourcelookup") || under(l, "framedoc")) ||
				strings.HasPrefix(imp, "go.lsp.dev/") || strings.HasPrefix(imp, "github.com/google/go-dap") ||
				strings.HasPrefix(imp, "github.com/go-git/")
		},
	},
	{
		why: "report and classify see the crash only through analysis/model (classify also decodes instructions; internal/lazyregexp, a leaf, compiles their patterns on first use)",
		applies: func(p string) bool {
			return under(p, "analysis/report") || under(p, "analysis/classify")
		},
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && l != "analysis/model" && l != "analysis/classify" && l != "analysis/disasm" &&
				l != "internal/lazyregexp" && l != "analysis/classify/runtimemsg"
		},
	},
	{
		why:     "the readers of runtime and sanitizer messages never import classify: they ask it through runtimemsg.Host",
		applies: func(p string) bool { return p == "analysis/classify/runtimemsg" },
		deps:    true,
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && l != "analysis/model" && l != "analysis/disasm" && l != "internal/lazyregexp"
		},
	},
	{
		why:     "what a module says of its upstream is read from local files only: moduleorigin imports no git, no network and no other gitsrc package (gitsrc's inventory calls it)",
		applies: func(p string) bool { return p == "gitsrc/moduleorigin" },
		deps:    true,
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && l != "analysis/regular" && l != "internal/lazyregexp" ||
				strings.HasPrefix(imp, "github.com/go-git/") || imp == "net" || imp == "net/http"
		},
	},
	{
		why:     "the LSP base-protocol stream knows no faultline package: lspstream frames JSON-RPC messages only",
		applies: func(p string) bool { return p == "server/lspstream" },
		deps:    true,
		forbids: func(imp string) bool { return strings.HasPrefix(imp, module) },
	},
	{
		why:     "the module pool sees only the analysis facade: modulepool never imports the server",
		applies: func(p string) bool { return p == "server/modulepool" },
		forbids: func(imp string) bool { return strings.HasPrefix(imp, module) && local(imp) != "analysis" },
	},
	{
		why:     "the model is the bottom of the engine: it imports no other faultline package",
		applies: func(p string) bool { return p == "analysis/model" },
		deps:    true,
		forbids: func(imp string) bool { return strings.HasPrefix(imp, module) },
	},
	{
		why: "the input formats do not know each other: native, logs and cuda readers never import the facade or one another",
		applies: func(p string) bool {
			return p == "analysis/native" || p == "analysis/logs" || p == "analysis/cuda" || p == "analysis/input"
		},
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && (l == "analysis" || l == "analysis/native" || l == "analysis/logs" ||
				l == "analysis/cuda" || l == "analysis/classify" || l == "analysis/report")
		},
	},
	{
		why: "only gitsrc and analysis/debuginfo/debugfile talk to the network (and the test servers that stand in for it)",
		applies: func(p string) bool {
			return !under(p, "gitsrc") && p != "analysis/debuginfo/debugfile" && p != "internal/slurmtest" && p != "internal/debuginfodtest"
		},
		forbids: func(imp string) bool { return imp == "net" || imp == "net/http" || imp == "net/rpc" },
	},
	{
		why:     "fetching debug files never imports symbolizing: debugfile sees ELF objects only",
		applies: func(p string) bool { return p == "analysis/debuginfo/debugfile" },
		deps:    true,
		forbids: func(imp string) bool {
			l := local(imp)
			return strings.HasPrefix(imp, module) && under(l, "analysis/debuginfo") &&
				l != "analysis/debuginfo/object" && l != "analysis/debuginfo/indexcache" && l != "analysis/debuginfo/inflate"
		},
	},
	{
		why:     "capture (run, hang) is a front end: only the command imports it",
		applies: func(p string) bool { return p != "" },
		forbids: func(imp string) bool { return imp == module+"/capture" },
	},
}

// debuginfoLayers are the layers of analysis/debuginfo, lowest first: a
// package imports only debuginfo packages of lower layers, so readers never
// import their users (ARCHITECTURE.md's code map).
var debuginfoLayers = [][]string{
	{"indexcache", "dwarfform", "inflate"},
	{"object"},
	{"elfsym", "dwarfline", "dwpindex", "debugfile"},
	{"dwarfreader"},
	{"variables"},
	{"symbolize"},
}

// debuginfoLayer is the layer of a package under analysis/debuginfo, -1 for
// one the table does not place.
func debuginfoLayer(p string) int {
	for i, layer := range debuginfoLayers {
		for _, name := range layer {
			if p == "analysis/debuginfo/"+name {
				return i
			}
		}
	}
	return -1
}

// layerRules are debuginfoLayers as rules: one per layer.
func layerRules() []rule {
	var out []rule
	for i := range debuginfoLayers {
		out = append(out, rule{
			why:     "analysis/debuginfo's readers never import their users: a package imports only lower layers (debuginfoLayers)",
			applies: func(p string) bool { return debuginfoLayer(p) == i },
			forbids: func(imp string) bool {
				l := local(imp)
				return strings.HasPrefix(imp, module+"/") && under(l, "analysis/debuginfo") && debuginfoLayer(l) >= i
			},
		})
	}
	return out
}

// TestDebuginfoPackagesLayered fails for a package under analysis/debuginfo
// that debuginfoLayers does not place.
func TestDebuginfoPackagesLayered(t *testing.T) {
	for _, p := range listPackages(t) {
		if l := local(p.ImportPath); under(l, "analysis/debuginfo") && debuginfoLayer(l) < 0 {
			t.Errorf("%s is in no layer of debuginfoLayers: place it there and in ARCHITECTURE.md's code map", l)
		}
	}
}

// TestImportRules checks every package against the rules.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range append(rules, layerRules()...) {
		applied := 0
		for _, p := range pkgs {
			rel := local(p.ImportPath)
			if !r.applies(rel) {
				continue
			}
			applied++
			imports := p.Imports
			if r.deps {
				imports = p.Deps
			}
			for _, imp := range imports {
				if r.forbids(imp) {
					t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
				}
			}
		}
		if applied == 0 {
			t.Errorf("rule %q applies to no package", r.why)
		}
	}
}

// TestRulesCatchViolations feeds the rules imports they must refuse, so a
// rule that can never fire fails here.
func TestRulesCatchViolations(t *testing.T) {
	cases := []struct{ pkg, imp string }{
		{"analysis/native", "go.lsp.dev/protocol"},
		{"analysis", module + "/server"},
		{"analysis/report", module + "/analysis"},
		{"analysis/classify", module + "/analysis/native"},
		{"analysis/classify/runtimemsg", module + "/analysis/classify"},
		{"analysis/classify/runtimemsg", module + "/analysis/report"},
		{"analysis/model", module + "/analysis/disasm"},
		{"gitsrc/moduleorigin", module + "/gitsrc"},
		{"gitsrc/moduleorigin", module + "/gitsrc/pkgdb"},
		{"gitsrc/moduleorigin", "github.com/go-git/go-git/v5"},
		{"gitsrc/moduleorigin", "net/http"},
		{"analysis/logs", module + "/analysis/native"},
		{"server", "net/http"},
		{"server", module + "/capture"},
		{"server/lspstream", module + "/server"},
		{"server/lspstream", module + "/analysis"},
		{"server/modulepool", module + "/server"},
		{"server/modulepool", module + "/analysis/native"},
		{"analysis/native", "net/http"},
		{"analysis/debuginfo/dwarfreader", module + "/analysis/debuginfo/symbolize"},
		{"analysis/debuginfo/dwarfreader", module + "/analysis/debuginfo/variables"},
		{"analysis/debuginfo/object", module + "/analysis/debuginfo/elfsym"},
		{"analysis/debuginfo/elfsym", module + "/analysis/debuginfo/dwarfline"},
		{"analysis/debuginfo/debugfile", module + "/analysis/debuginfo/symbolize"},
		{"analysis/debuginfo/debugfile", module + "/analysis/debuginfo/dwarfreader"},
	}
	for _, c := range cases {
		caught := false
		for _, r := range append(rules, layerRules()...) {
			caught = caught || (r.applies(c.pkg) && r.forbids(c.imp))
		}
		if !caught {
			t.Errorf("no rule refuses %s importing %s", c.pkg, c.imp)
		}
	}
}
