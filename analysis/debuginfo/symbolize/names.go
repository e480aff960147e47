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

// Fortran's language codes (DWARF 5 Table 7.17; Fortran 2018 from DWARF 6's
// list, as gcc 11 and later emit it).
const (
	langFortran77 = 0x07
	langFortran90 = 0x08
	langFortran95 = 0x0e
	langFortran03 = 0x22
	langFortran08 = 0x23
	langFortran18 = 0x2d
)

func isFortran(lang int64) bool {
	switch lang {
	case langFortran77, langFortran90, langFortran95, langFortran03, langFortran08, langFortran18:
		return true
	}
	return false
}

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

// SymbolName is the symbol table's name of the function at pc (a
// link-time address), demangled as demangleNoParams does; "" when no
// symbol covers pc.
func (s *Symbols) SymbolName(pc uint64) string {
	sym := s.symbolAt(pc)
	if sym == nil {
		return ""
	}
	name, _ := demangleNoParams(sym.Name)
	return name
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
		ref, sup := d.Spec, d.SpecSup
		if ref == 0 {
			ref, sup = d.Origin, d.OriginSup
		}
		next, ok := chain[len(chain)-1].T.Resolve(ref, sup)
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
//
// Rust and Fortran frames are named from the DIE tree alone, as gdb's
// dwarf2_full_name names them: for Rust, the DW_AT_name (which carries the
// generic arguments, "write_volatile<u8>", and closures as "{closure#0}")
// under its namespaces and types, never the linkage name (its legacy
// demangling says "{{closure}}", and #[export_name] functions have another:
// rust_begin_unwind is std::panicking::begin_panic_handler); for Fortran,
// the name under its module ("grid::fill_row", not __grid_MOD_fill_row) or,
// for an internal procedure, under its host's DW_AT_name (fortranPrefix).
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
	if lang == langRust || isFortran(lang) {
		prefix := ""
		if name == "" {
			return "" // the symbol table names it
		} else if lang == langRust {
			prefix = qualifiedPrefix(chain)
		} else {
			prefix = fortranPrefix(r, chain)
		}
		if prefix != "" {
			return prefix + "::" + name
		}
		return name
	}
	if linkage != "" {
		if isCPlusPlus(lang) {
			if s, ok := demangleNoParams(linkage); ok {
				return s
			}
		}
		return linkage
	}
	if isCPlusPlus(lang) && name != "" {
		if p := qualifiedPrefix(chain); p != "" {
			return p + "::" + name
		}
	}
	return name
}

// fortranPrefix is gdb's determine_prefix for Fortran: a procedure in a
// module is prefixed by the module's name; an internal procedure (a
// DW_TAG_subprogram whose parent is a subprogram) by its host's DW_AT_name
// alone ("fill_row::put", not "geometry::fill_row::put"), and the same
// procedure inlined (a DW_TAG_inlined_subroutine) by nothing.
func fortranPrefix(r dwarfreader.DieRef, chain []dwarfreader.DieRef) string {
	decl := declaration(chain)
	t := decl.T
	for p := decl.Die().Parent; p >= 0; p = t.Dies[p].Parent {
		switch d := &t.Dies[p]; d.Tag {
		case dwarf.TagModule:
			return t.Df.Str(d.Name)
		case dwarf.TagSubprogram:
			if r.Die().Tag == dwarf.TagSubprogram {
				return t.Df.Str(d.Name)
			}
			return ""
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			return ""
		}
	}
	return ""
}

// declaration is the DIE a name's scope is read from: the last one reached
// through DW_AT_specification and DW_AT_abstract_origin.
func declaration(chain []dwarfreader.DieRef) dwarfreader.DieRef {
	for _, c := range chain {
		if c.Die().Spec == 0 && c.Die().Origin == 0 {
			return c
		}
	}
	return chain[0]
}

// qualifiedPrefix is gdb's determine_prefix: the names of the namespaces
// and classes enclosing the declaration (the last DIE reached through
// DW_AT_specification), outermost first.
func qualifiedPrefix(chain []dwarfreader.DieRef) string {
	decl := declaration(chain)
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
