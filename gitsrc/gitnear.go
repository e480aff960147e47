package gitsrc

import (
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/faultline-dev/faultline/analysis"
)

// frameSourcePath is the path of a frame's file as the compiler saw it:
// a relative DWARF file name ("gcc -g file.c") joined with the unit's
// DW_AT_comp_dir.
func frameSourcePath(f *analysis.Frame) string {
	if f.File == "" || filepath.IsAbs(f.File) || !filepath.IsAbs(f.CompDir) {
		return f.File
	}
	return filepath.Join(f.CompDir, f.File)
}

// trackedHead opens the working repository at dir and returns its HEAD
// commit when HEAD's tree tracks at least one of files (absolute paths):
// a repository that merely contains the build directory (a home directory
// kept in git) is no guess for the program's source.
func trackedHead(dir string, files []string) (string, bool) {
	r, st, err := openGit(dir)
	if err != nil {
		return "", false
	}
	defer st.Close()
	head, err := r.Head()
	if err != nil {
		return "", false
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		return "", false
	}
	tree, err := c.Tree()
	if err != nil {
		return "", false
	}
	for _, f := range files {
		if rel, ok := repoRelative(dir, f); ok && treeHas(tree, rel) {
			return head.Hash().String(), true
		}
	}
	return "", false
}

// repoRelative is file's path inside the working repository at dir.
func repoRelative(dir, file string) (string, bool) {
	if !filepath.IsAbs(file) {
		return "", false
	}
	rel, err := filepath.Rel(dir, filepath.Clean(file))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func treeHas(t *object.Tree, rel string) bool {
	_, err := t.File(rel)
	return err == nil
}

// localMatch maps a frame's file onto a working repository found near the
// sources: only a file inside the repository's directory that its tree
// tracks (never a same-named file elsewhere). n is the number of path
// elements matched, 0 for none.
func (comp *component) localMatch(file string) (string, int) {
	rel, ok := repoRelative(comp.repo.url, file)
	if !ok || comp.tracked == nil || !comp.tracked[rel] {
		return "", 0
	}
	return rel, len(strings.Split(rel, "/"))
}
