// Package input opens a dump once: the file, or standard input for "-",
// with its compression (gzip, zstd, xz, lz4) undone once into a plain
// seekable file, and its first bytes kept for sniffing the format. Every
// reader of a dump (ELF core, GPU core, each log format) reads the Input;
// none opens the path again or knows about compression.
package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// HeadSize is how much of the (decompressed) dump Head holds: enough to
// sniff every format faultline reads.
const HeadSize = 1 << 20

// Stdin is the dump path that reads the dump from standard input.
const Stdin = "-"

// Input is an opened dump.
type Input struct {
	// Name is the path as the user gave it ("-" for standard input): the
	// dump's name in the model and in messages.
	Name string
	// File holds the dump's plain bytes: the file itself, or a temporary
	// file when the dump was compressed or came from standard input.
	File *os.File
	// Size is File's size in bytes.
	Size int64
	// Head is the first HeadSize bytes of File (fewer for a shorter dump).
	Head []byte
	// Compression is the format undone: "", "gzip", "zstd", "xz", "lz4",
	// or "apport" (the core of an apport report's CoreDump field).
	Compression string
	// Damaged says why a compressed dump's data broke off ("" if it did
	// not): File holds what was decompressed, read like a truncated dump.
	Damaged string
	// Report is what the crash reporter kept with the core, when the dump
	// is one's container (an apport report, an ABRT problem directory).
	Report *Report
}

// Report is what a crash reporter recorded with the core it kept: an
// apport report's fields (Ubuntu's /var/crash/*.crash), an ABRT problem
// directory's files (Fedora's /var/spool/abrt/ccpp-*).
type Report struct {
	// Kind is "apport" or "abrt".
	Kind string
	// Executable is the crashed program's path (apport ExecutablePath,
	// ABRT executable).
	Executable string
	// Command is its command line (apport ProcCmdline, ABRT cmdline).
	Command string
	// Packages are the packages recorded at the versions installed when
	// the program crashed, the program's own first.
	Packages []model.Package
}

// Open opens the dump at path ("-": standard input), undoing compression;
// an apport report gives the core of its CoreDump field, an ABRT problem
// directory its coredump, each with the reporter's Report.
func Open(path string) (*Input, error) {
	src := os.Stdin
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return openABRT(path) // or says what a directory should hold
	}
	if path != Stdin {
		// Regular files only, opened without blocking: a FIFO, a device or
		// /dev/stdin named as the dump would hang the servers or read their
		// protocol stream. A stream is read from standard input ("-").
		f, _, err := regular.Open(path)
		var nr *regular.NotRegularError
		if errors.As(err, &nr) {
			return nil, fmt.Errorf("%w; a dump is a file (a stream can be read from standard input: -)", err)
		} else if err != nil {
			return nil, err
		}
		src = f
	}
	in := &Input{Name: path}
	br := bufio.NewReaderSize(src, 64<<10)
	magic, _ := br.Peek(magicLen)
	in.Compression = compressionOf(magic)
	if in.Compression == "" && path != Stdin {
		in.File = src // read in place
	} else {
		err := in.spool(br)
		if path != Stdin {
			src.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := in.readHead(); err != nil {
		in.Close()
		return nil, err
	}
	if isApport(in.Head) {
		if err := in.openApport(); err != nil {
			in.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return in, nil
}

// openApport replaces the apport report in File by the core its CoreDump
// field holds, decoded and decompressed into a temporary file (unlinked at
// once, as spool's), and keeps the report's fields in Report.
func (in *Input) openApport() error {
	tmp, err := os.CreateTemp("", "faultline-core-*")
	if err != nil {
		return err
	}
	os.Remove(tmp.Name())
	rep, damaged, err := readApport(in.Reader(), tmp)
	if err != nil {
		tmp.Close()
		return err
	}
	in.File.Close()
	in.File, in.Report, in.Damaged, in.Compression = tmp, rep, damaged, "apport"
	return in.readHead()
}

// spool writes the decompressed dump into a temporary file and makes it
// File. The file is unlinked as soon as it is created: only the open
// descriptor (and a mapping of it) keeps it, so nothing is left in TMPDIR
// however faultline ends (SIGINT, SIGTERM, SIGHUP, SIGKILL, a crash).
func (in *Input) spool(r io.Reader) (err error) {
	plain, err := decompress(in.Compression, r)
	if err != nil {
		return err
	}
	defer plain.Close()
	br := bufio.NewReaderSize(plain, 64<<10)
	if in.Compression != "" {
		head, _ := br.Peek(512)
		if !plausibleDump(head) {
			return fmt.Errorf("the %s data does not decompress to an ELF core or a text log; not decompressed further", in.Compression)
		}
	}
	tmp, err := os.CreateTemp("", "faultline-core-*")
	if err != nil {
		return err
	}
	os.Remove(tmp.Name())
	in.File = tmp
	damaged, err := copyCapped(tmp, br, in.Compression)
	if err != nil {
		in.Close()
		return err
	}
	in.Damaged = damaged
	return nil
}

func (in *Input) readHead() error {
	st, err := in.File.Stat()
	if err != nil {
		return err
	}
	in.Size = st.Size()
	in.Head = make([]byte, min(in.Size, HeadSize))
	n, err := in.File.ReadAt(in.Head, 0)
	in.Head = in.Head[:n]
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// Reader reads the dump's plain bytes from the start; each call starts
// over.
func (in *Input) Reader() io.ReadCloser {
	return io.NopCloser(io.NewSectionReader(in.File, 0, in.Size))
}

// Close closes File (a temporary file is already unlinked: closing it
// frees it). A core mapped from File stays readable after Close.
func (in *Input) Close() error {
	if in == nil || in.File == nil {
		return nil
	}
	err := in.File.Close()
	in.File = nil
	return err
}
