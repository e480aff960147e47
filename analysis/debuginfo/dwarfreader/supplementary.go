package dwarfreader

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Supplementary object files (DWARF 5 §7.3.6, and the GNU extension dwz
// wrote before it): dwz moves the DIEs and strings that several debug files
// share into one multifile, which each names in .gnu_debugaltlink or
// .debug_sup, and refers to them with DW_FORM_GNU_ref_alt and
// DW_FORM_GNU_strp_alt (DW_FORM_ref_sup4/8 and DW_FORM_strp_sup). A
// reference into it is kept as its offset with SupRef set (Resolve follows
// it there); a string, as a StrRef of strInSup.

// SupRef marks a DIE offset in the supplementary file.
const SupRef = 1 << 62

// SupplementaryFinder finds the supplementary file a debug file names (its
// name and build-id): the path, or "" and what was tried.
type SupplementaryFinder func(name string, buildID []byte) (path string, tried []string)

// supplementary is the supplementary file of a DwarfFile, opened the first
// time a reference or a string needs it.
type supplementary struct {
	find SupplementaryFinder
	once sync.Once
	df   *DwarfFile
	obj  *object.Object
	err  error // why it could not be opened, once something needed it
}

// SetSupplementaryFinder gives df the way to find its supplementary file.
func (df *DwarfFile) SetSupplementaryFinder(find SupplementaryFinder) {
	df.sup = &supplementary{find: find}
}

// supFile is the supplementary file's DWARF, opened on first use; nil when
// there is none (SupplementaryError says why).
func (df *DwarfFile) supFile() *DwarfFile {
	if df.sup == nil {
		df.sup = &supplementary{}
	}
	s := df.sup
	s.once.Do(func() { s.df, s.obj, s.err = df.openSupplementary(s.find) })
	return s.df
}

// openSupplementary finds and opens the file df.Obj names as its
// supplementary file.
func (df *DwarfFile) openSupplementary(find SupplementaryFinder) (*DwarfFile, *object.Object, error) {
	name, id, ok := df.Obj.SupplementaryLink()
	if !ok {
		return nil, nil, fmt.Errorf("%s refers to a supplementary (dwz) file but names none (no .gnu_debugaltlink or .debug_sup)", df.Obj.Path())
	}
	what := fmt.Sprintf("the dwz file %s (id %x) that %s refers to", name, id, df.Obj.Path())
	if find == nil {
		return nil, nil, fmt.Errorf("%s was not looked for", what)
	}
	path, tried := find(name, id)
	if path == "" {
		return nil, nil, &MissingSupplementaryError{What: what, Tried: tried}
	}
	o, err := object.OpenObject(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	sdf, err := OpenDWARF(o)
	if err == nil && sdf == nil {
		err = errors.New("no .debug_info")
	}
	if err != nil {
		o.Close()
		return nil, nil, fmt.Errorf("%s: %s: %w", what, path, err)
	}
	return sdf, o, nil
}

// MissingSupplementaryError says which supplementary file was not found
// and where it was looked for.
type MissingSupplementaryError struct {
	What  string
	Tried []string
}

func (e *MissingSupplementaryError) Error() string {
	return fmt.Sprintf("%s was not found (%s)", e.What, strings.Join(e.Tried, "; "))
}

// SupplementaryError reports why names and DIEs df takes from its
// supplementary file could not be read, once one was needed; nil when none
// was or it was read.
func (df *DwarfFile) SupplementaryError() error {
	if df == nil || df.sup == nil {
		return nil
	}
	return df.sup.err
}

// CloseSupplementary closes the supplementary file df opened.
func (df *DwarfFile) CloseSupplementary() {
	if df.sup != nil && df.sup.obj != nil {
		df.sup.obj.Close()
		df.sup.obj, df.sup.df = nil, nil
	}
}
