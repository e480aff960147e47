//go:build !unix

package elfcore

import (
	"io"
	"os"
)

// mapFile reads f into memory on systems without mmap.
func mapFile(f *os.File) ([]byte, func() error, error) {
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
