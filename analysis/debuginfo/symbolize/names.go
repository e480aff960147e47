package symbolize

import (
	"debug/dwarf"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/rustdemangle"
	"github.com/ianlancetaylor/demangle"
)

// Source languages (DWARF 5 §7.12, Table 7.17).
const (
	langCPlusPlus   = 0x04
	langCPlusPlus03 = 0x19
	langCPlusPlus11 = 0x1a
	langRust        = 0x1c
	langCPlusPlus14 = 0x21
	langCPlusPlus17 = 0x2a // DWARF 6 draft; emitted by newer compilers
	langCPlusPlus20 = 0x2b
)

func isCPlusPlus(lang int64) bool {
	switch lang {
	case langCPlusPlus, langCPlusPlus03, langCPlusPlus11, langCPlusPlus14, langCPlusPlus17, langCPlusPlus20:
		return true
	}
	return false
}

// demangleOpts bound the demangler's work on hostile names.
var demangleOpts = []demangle.Option{demangle.MaxLength(20)}

// demangleFull demangles a symbol table name as gdb prints minimal symbols
// (DMGL_PARAMS | DMGL_ANSI: with parameters and clone suffixes).
func demangleFull(name string) string {
	// BFD's synthetic PLT symbols: gdb demangles the name before "@plt".
	if base, ok := strings.CutSuffix(name, "@plt"); ok && base != "" {
		return demangleFull(base) + "@plt"
	}
	if !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") {
		return name
	}
	// gdb demangles a Rust minimal symbol verbose: a legacy name keeps its
	// hash, a v0 name its crate disambiguators.
	if s, ok := rustdemangle.Demangle(name, rustdemangle.Options{Verbose: true}); ok {
		return s
	}
	// Like gdb's minimal symbols, expand the standard substitutions
	// (Ss is std::basic_string<char, std::char_traits<char>,
	// std::allocator<char> >, not std::string).
	s, err := demangle.ToString(name, append([]demangle.Option{demangle.Verbose}, demangleOpts...)...)
	if err != nil {
		return name
	}
	return s
}

// demangleNoParams demangles a DWARF linkage name as gdb's `bt` shows a
// function symbol: demangled, then cp_remove_params.
func demangleNoParams(name string) (string, bool) {
	if s, ok := rustdemangle.Demangle(name, rustdemangle.Options{}); ok {
		return s, true // Rust's own rules: no hash, no disambiguators
	}
	s, err := demangle.ToString(name, append([]demangle.Option{demangle.NoParams}, demangleOpts...)...)
	if err != nil {
		return name, false
	}
	return s, true
}

// maxRefChain bounds DW_AT_specification / DW_AT_abstract_origin chains
// (a cycle in hostile input must not hang us).
const maxRefChain = 16

// attrChain returns the DIE followed by the DIEs reached through
// DW_AT_specification and DW_AT_abstract_origin, as gdb's dwarf2_attr
// searches them.
func attrChain(r dwarfreader.DieRef) []dwarfreader.DieRef {
	chain := []dwarfreader.DieRef{r}
	for len(chain) < maxRefChain {
		d := chain[len(chain)-1].Die()
		ref := d.Spec
		if ref == 0 {
			ref = d.Origin
		}
		next, ok := chain[len(chain)-1].T.Resolve(ref)
		if !ok {
			break
		}
		chain = append(chain, next)
	}
	return chain
}

// functionName is the name gdb's `bt` prints for a subprogram or inlined
// subroutine DIE: the symbol's print name (the demangled DW_AT_linkage_name
// when there is one, else the name qualified by its enclosing namespaces and
// classes), with the parameter list removed for C++ (find_frame_funname).
func functionName(r dwarfreader.DieRef) string {
	chain := attrChain(r)
	lang := r.T.Lang
	var name, linkage string
	for _, c := range chain {
		d := c.Die()
		if linkage == "" {
			linkage = c.T.Df.Str(d.Linkage)
		}
		if name == "" {
			name = c.T.Df.Str(d.Name)
		}
	}
	// rustc has emitted invalid linkage names; gdb ignores those with '{'.
	if lang == langRust && strings.Contains(linkage, "{") {
		linkage = ""
	}
	if linkage != "" {
		if isCPlusPlus(lang) || lang == langRust {
			if s, ok := demangleNoParams(linkage); ok {
				return s
			}
		}
		return linkage
	}
	if (isCPlusPlus(lang) || lang == langRust) && name != "" {
		if p := qualifiedPrefix(chain); p != "" {
			return p + "::" + name
		}
	}
	return name
}

// qualifiedPrefix is gdb's determine_prefix: the names of the namespaces
// and classes enclosing the declaration (the last DIE reached through
// DW_AT_specification), outermost first.
func qualifiedPrefix(chain []dwarfreader.DieRef) string {
	decl := chain[0]
	for _, c := range chain {
		if c.Die().Spec == 0 && c.Die().Origin == 0 {
			decl = c
			break
		}
	}
	var parts []string
	t := decl.T
	for p := decl.Die().Parent; p >= 0 && len(parts) < 64; p = t.Dies[p].Parent {
		d := &t.Dies[p]
		name := t.Df.Str(d.Name)
		switch d.Tag {
		case dwarf.TagNamespace:
			if name == "" {
				parts = append(parts, "(anonymous namespace)")
			} else {
				parts = append(parts, name)
			}
		case dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagEnumerationType, dwarf.TagInterfaceType:
			if name == "" {
				return joinReversed(parts)
			}
			parts = append(parts, name)
		default:
			return joinReversed(parts)
		}
	}
	return joinReversed(parts)
}

func joinReversed(parts []string) string {
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "::")
}
