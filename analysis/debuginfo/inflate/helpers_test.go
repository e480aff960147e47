package inflate

import "io"

func io_ReadFull(r io.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }
