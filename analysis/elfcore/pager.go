package elfcore

import (
	"io"
	"os"
	"sync"
)

// pager reads process memory from the core file with pread into a bounded
// cache of small pages, instead of through the file mapping. A core's
// memory is read in scattered small pieces (a few pages of each thread's
// stack, a word here and there); through the mapping every fault also maps
// the 15 neighbouring pages (the kernel's fault-around), so a 1,024-thread
// core's resident set grew by 64 KiB per stack for the few bytes read
// there. The notes, read whole and once, still come from the mapping.
type pager struct {
	f    *os.File
	size int64 // the file's size when it was opened

	mu    sync.Mutex
	pages map[int64][]byte // by file offset / pagerPage
}

const (
	pagerPage = 4096
	// pagerMaxPages caps the cache (64 MiB); when it is full it starts
	// over. Slices handed out stay valid: pages are never reused.
	pagerMaxPages = 16384
)

func newPager(f *os.File, size int64) *pager {
	return &pager{f: f, size: size, pages: make(map[int64][]byte)}
}

// bytesAt returns up to n bytes of the file at off, at least one, within
// one page; an error when the file no longer holds off (it was truncated
// while open).
func (p *pager) bytesAt(off, n uint64) ([]byte, error) {
	idx := int64(off / pagerPage)
	within := off % pagerPage
	p.mu.Lock()
	page, ok := p.pages[idx]
	p.mu.Unlock()
	if !ok {
		var err error
		if page, err = p.read(idx); err != nil {
			return nil, err
		}
	}
	if within >= uint64(len(page)) {
		return nil, &FormatError{Format: "elfcore", Off: int64(off), Msg: "the core file ends before its segment data (was it truncated while open?)"}
	}
	return page[within:min(uint64(len(page)), within+n)], nil
}

func (p *pager) read(idx int64) ([]byte, error) {
	off := idx * pagerPage
	page := make([]byte, min(pagerPage, max(p.size-off, 0)))
	k, err := p.f.ReadAt(page, off)
	if err != nil && err != io.EOF {
		return nil, &FormatError{Format: "elfcore", Off: off, Msg: "reading the core: " + err.Error(), Err: err}
	}
	page = page[:k]
	p.mu.Lock()
	if len(p.pages) >= pagerMaxPages {
		p.pages = make(map[int64][]byte)
	}
	p.pages[idx] = page
	p.mu.Unlock()
	return page, nil
}
