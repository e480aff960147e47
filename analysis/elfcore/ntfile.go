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

// decodeFiles decodes NT_FILE (linux/fs/binfmt_elf.c fill_files_note;
// longs of 4 bytes in a 32-bit process's core):
//
//	long count, page_size;
//	struct { long start, end, file_ofs; } files[count]; // file_ofs in pages
//	char names[];                                       // count NUL-terminated paths
func (c *Core) decodeFiles(n rawNote) []MappedFile {
	d, w := n.desc, uint64(c.lay.word)
	if uint64(len(d)) < 2*w {
		c.problem(n.off, "NT_FILE of %d bytes is too short", len(d))
		return []MappedFile{}
	}
	word := func(b []byte) uint64 {
		if w == 4 {
			return uint64(c.ByteOrder.Uint32(b))
		}
		return c.ByteOrder.Uint64(b)
	}
	count := word(d)
	pageSize := word(d[w:])
	fit := (uint64(len(d)) - 2*w) / (3 * w)
	if count > fit {
		c.problem(n.off, "NT_FILE claims %d mappings but its %d bytes hold at most %d", count, len(d), fit)
		count = fit
	}
	if count > maxFiles {
		c.problem(n.off, "NT_FILE has %d mappings; keeping %d", count, maxFiles)
		count = maxFiles
	}
	names := d[2*w+count*3*w:]
	if len(names) > maxFileStrings {
		c.problem(n.off, "NT_FILE path table of %d bytes truncated to %d", len(names), maxFileStrings)
		names = names[:maxFileStrings]
	}
	files := make([]MappedFile, 0, count)
	for i := uint64(0); i < count; i++ {
		e := d[2*w+i*3*w:]
		f := MappedFile{Start: word(e), End: word(e[w:])}
		pgoff := word(e[2*w:])
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
