//go:build !unix

package elfcore

import (
	"io"
	"os"
)

// mapFile reads f into memory on systems without mmap.
func mapFile(f *os.File) ([]byte, *pager, func() error, error) {
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, nil, func() error { return nil }, nil
}
