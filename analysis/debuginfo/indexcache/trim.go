package indexcache

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// staleTemp is how old a temporary file must be before trim deletes it as
// left behind by a process that died while writing.
const staleTemp = 10 * time.Minute

// trim deletes least recently used entries until the directory holds at
// most maxBytes. Another process may be trimming at the same time: a file
// already gone is simply skipped, and a process that has an entry mapped
// keeps reading it after it is deleted.
func (c *Cache) trim() error {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		p := filepath.Join(c.dir, e.Name())
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > staleTemp {
				os.Remove(p)
			}
			continue
		}
		if !strings.HasSuffix(e.Name(), ".idx") {
			continue
		}
		files = append(files, file{p, info.Size(), info.ModTime()})
		total += info.Size()
	}
	if total <= c.maxBytes {
		return nil
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= c.maxBytes {
			break
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
	return nil
}
