package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxCheckoutFile caps one file written into a checkout.
const maxCheckoutFile = 256 << 20

// sparseMarker, at the root of a checkout, lists the directories written
// when only part of a huge repository was checked out.
const sparseMarker = ".faultline-sparse"

// treeFile is one regular file of a commit's tree.
type treeFile struct {
	path string
	hash plumbing.Hash
	mode filemode.FileMode
}

// listTree lists the regular files of a tree (symlinks and submodules are
// skipped: a checkout never holds a link that could lead out of the cache).
// Paths that are unsafe to write are reported, not listed.
func listTree(ctx context.Context, t *object.Tree) ([]treeFile, []string, error) {
	var files []treeFile
	var unsafe []string
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		name, e, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if e.Mode != filemode.Regular && e.Mode != filemode.Executable && e.Mode != filemode.Deprecated {
			continue
		}
		p, err := cleanRepoPath(name)
		if err != nil {
			unsafe = append(unsafe, name)
			continue
		}
		files = append(files, treeFile{path: p, hash: e.Hash, mode: e.Mode})
	}
	return files, unsafe, nil
}

// checkout writes the files of a commit into dest. With dirs nil the whole
// tree is written into a partial directory next to dest and renamed onto
// dest when complete; an interrupted checkout resumes from the files
// already there. With dirs set (huge repositories) only the files directly
// in those directories are written, each atomically, into dest, and dest
// records them in its sparse marker. All writes go through os.Root, so a
// path can never lead outside dest. The caller holds the cache lock.
func checkout(ctx context.Context, r *repository, files []treeFile, dest string, dirs []string, report func(done, total int)) error {
	if dirs == nil {
		if st, err := os.Stat(dest); err == nil && st.IsDir() {
			if _, err := os.Stat(filepath.Join(dest, sparseMarker)); errors.Is(err, fs.ErrNotExist) {
				return nil // complete
			}
		}
		partial := filepath.Join(filepath.Dir(dest), ".partial-"+filepath.Base(dest))
		if err := os.MkdirAll(partial, 0o755); err != nil {
			return err
		}
		if err := writeFiles(ctx, r, files, partial, report); err != nil {
			return err
		}
		if err := os.RemoveAll(dest); err != nil {
			return err
		}
		return os.Rename(partial, dest)
	}
	want := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		want[d] = true
	}
	var sel []treeFile
	for _, f := range files {
		if want[path.Dir(f.path)] {
			sel = append(sel, f)
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	if err := writeFiles(ctx, r, sel, dest, report); err != nil {
		return err
	}
	return recordSparse(dest, dirs)
}

func recordSparse(dest string, dirs []string) error {
	have := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dest, sparseMarker)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				have[l] = true
			}
		}
	}
	for _, d := range dirs {
		have[d] = true
	}
	list := make([]string, 0, len(have))
	for d := range have {
		list = append(list, d)
	}
	sort.Strings(list)
	return writeAtomic(dest, sparseMarker, strings.NewReader(strings.Join(list, "\n")+"\n"), 0o644)
}

// sparseHas reports whether a sparse checkout already holds directory dir.
func sparseHas(dest, dir string) bool {
	b, err := os.ReadFile(filepath.Join(dest, sparseMarker))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l == dir {
			return true
		}
	}
	return false
}

func writeFiles(ctx context.Context, r *repository, files []treeFile, dir string, report func(done, total int)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	made := map[string]bool{}
	for i, f := range files {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if report != nil {
				report(i, len(files))
			}
		}
		blob, err := r.git.BlobObject(f.hash)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		if blob.Size > maxCheckoutFile {
			continue
		}
		// Resume: files are written atomically, so one that is there with
		// the blob's size is complete.
		if st, err := root.Lstat(f.path); err == nil && st.Mode().IsRegular() && st.Size() == blob.Size {
			continue
		}
		if d := path.Dir(f.path); d != "." && !made[d] {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			made[d] = true
		}
		rd, err := blob.Reader()
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		perm := os.FileMode(0o644)
		if f.mode == filemode.Executable {
			perm = 0o755
		}
		err = writeRootAtomic(root, f.path, io.LimitReader(rd, maxCheckoutFile), perm)
		rd.Close()
		if err != nil {
			return err
		}
	}
	if report != nil {
		report(len(files), len(files))
	}
	return nil
}

// writeRootAtomic writes name under root through a temporary file and a rename.
func writeRootAtomic(root *os.Root, name string, r io.Reader, perm os.FileMode) error {
	tmp := path.Join(path.Dir(name), ".tmp-"+path.Base(name))
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// writeAtomic writes dir/name through a temporary file and a rename.
func writeAtomic(dir, name string, r io.Reader, perm os.FileMode) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return writeRootAtomic(root, name, r, perm)
}
