//go:build unix

package elfcore

import (
	"os"
	"syscall"
)

// mapFile maps f read-only and opens a pager on a duplicate of its
// descriptor (f may be closed once OpenFile returns). An empty file maps
// to an empty slice.
func mapFile(f *os.File) ([]byte, *pager, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, nil, &FormatError{Format: "elfcore", Off: 0, Msg: "file too large to map"}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, nil, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		syscall.Munmap(data)
		return nil, nil, nil, err
	}
	syscall.CloseOnExec(fd)
	dup := os.NewFile(uintptr(fd), f.Name())
	release := func() error {
		err := syscall.Munmap(data)
		if cerr := dup.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return data, newPager(dup, size), release, nil
}
