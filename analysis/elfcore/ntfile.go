package elfcore

import (
	"bytes"
	"sort"
)

// MappedFile is one file-backed mapping from NT_FILE: [Start, End) maps the
// file at Path from byte FileOffset.
type MappedFile struct {
	Start, End uint64
	FileOffset uint64 // the note's page offset times its page size
	Path       string
}

// decodeFiles decodes NT_FILE (linux/fs/binfmt_elf.c fill_files_note):
//
//	long count, page_size;
//	struct { long start, end, file_ofs; } files[count]; // file_ofs in pages
//	char names[];                                       // count NUL-terminated paths
func (c *Core) decodeFiles(n rawNote) []MappedFile {
	d := n.desc
	if len(d) < 16 {
		c.problem(n.off, "NT_FILE of %d bytes is too short", len(d))
		return []MappedFile{}
	}
	count := c.ByteOrder.Uint64(d)
	pageSize := c.ByteOrder.Uint64(d[8:])
	fit := uint64(len(d)-16) / 24
	if count > fit {
		c.problem(n.off, "NT_FILE claims %d mappings but its %d bytes hold at most %d", count, len(d), fit)
		count = fit
	}
	if count > maxFiles {
		c.problem(n.off, "NT_FILE has %d mappings; keeping %d", count, maxFiles)
		count = maxFiles
	}
	names := d[16+count*24:]
	if len(names) > maxFileStrings {
		c.problem(n.off, "NT_FILE path table of %d bytes truncated to %d", len(names), maxFileStrings)
		names = names[:maxFileStrings]
	}
	files := make([]MappedFile, 0, count)
	for i := uint64(0); i < count; i++ {
		e := d[16+i*24:]
		f := MappedFile{
			Start: c.ByteOrder.Uint64(e),
			End:   c.ByteOrder.Uint64(e[8:]),
		}
		pgoff := c.ByteOrder.Uint64(e[16:])
		f.FileOffset = pgoff * pageSize
		if pageSize != 0 && f.FileOffset/pageSize != pgoff {
			c.problem(n.off, "NT_FILE entry %d: page offset %#x times page size %#x overflows", i, pgoff, pageSize)
			f.FileOffset = 0
		}
		nul := bytes.IndexByte(names, 0)
		if nul < 0 {
			if len(names) == 0 {
				c.problem(n.off, "NT_FILE has %d mappings but only %d paths", count, i)
				break
			}
			nul = len(names) // last path without its NUL
		}
		f.Path = string(names[:nul])
		names = names[min(nul+1, len(names)):]
		if f.End < f.Start {
			c.problem(n.off, "NT_FILE entry %d for %s ends (%#x) before it starts (%#x)", i, f.Path, f.End, f.Start)
			f.End = f.Start
		}
		files = append(files, f)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Start < files[j].Start })
	return files
}

// FileAt returns the NT_FILE mapping that contains addr, or nil.
func (c *Core) FileAt(addr uint64) *MappedFile {
	i := sort.Search(len(c.Files), func(i int) bool { return c.Files[i].Start > addr }) - 1
	if i >= 0 && addr < c.Files[i].End {
		return &c.Files[i]
	}
	return nil
}
