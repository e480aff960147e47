// Package apporttest writes Ubuntu apport problem reports (the
// /var/crash/*.crash files) for tests, as apport's problem_report.py
// (ProblemReport.write) writes them: "Key: value" lines, ProblemType
// first, the other text keys sorted, a multi-line value continued on
// lines that start with a space; then the binary keys sorted, each
// "Key: base64" and one base64 line per block of a gzip member: the gzip
// header naming the key, the raw deflate output (level 6) of 128 KiB
// chunks, and the CRC-32 and size trailer. Debian does not package
// apport, so the tests make the reports apport would make of cores
// crashed here.
package apporttest

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os/exec"
	"sort"
	"strings"
)

// chunkSize is problem_report.CHUNK_SIZE.
const chunkSize = 128 << 10

// gzipHeader is problem_report's gzip header of a binary value named key:
// ID1 ID2, CM deflate, FLG FNAME, MTIME 0, XFL 2, OS 255, then the name
// (RFC 1952 §2.3).
func gzipHeader(key string) []byte {
	return append([]byte("\x1f\x8b\x08\x08\x00\x00\x00\x00\x02\xff"+key), 0)
}

// Write writes a report of the text fields and the binary ones (their
// plain bytes: CoreDump is the core) to w.
func Write(w io.Writer, text map[string]string, binary map[string]io.Reader) error {
	keys := make([]string, 0, len(text))
	for k := range text {
		if k != "ProblemType" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := text["ProblemType"]; ok {
		keys = append([]string{"ProblemType"}, keys...)
	}
	for _, k := range keys {
		v := text[k]
		var err error
		if strings.Contains(v, "\n") {
			_, err = fmt.Fprintf(w, "%s:\n %s\n", k, strings.ReplaceAll(v, "\n", "\n "))
		} else {
			_, err = fmt.Fprintf(w, "%s: %s\n", k, v)
		}
		if err != nil {
			return err
		}
	}
	bin := make([]string, 0, len(binary))
	for k := range binary {
		bin = append(bin, k)
	}
	sort.Strings(bin)
	for _, k := range bin {
		if err := writeBinary(w, k, binary[k]); err != nil {
			return err
		}
	}
	return nil
}

// writeBinary writes one binary value as problem_report's
// _write_binary_item_base64_encoded does.
func writeBinary(w io.Writer, key string, r io.Reader) error {
	if _, err := fmt.Fprintf(w, "%s: base64", key); err != nil {
		return err
	}
	line := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		_, err := fmt.Fprintf(w, "\n %s", base64.StdEncoding.EncodeToString(b))
		return err
	}
	if err := line(gzipHeader(key)); err != nil {
		return err
	}
	var out bytes.Buffer
	fw, _ := flate.NewWriter(&out, 6)
	crc, size := crc32.NewIEEE(), uint32(0)
	buf := make([]byte, chunkSize)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			crc.Write(buf[:n])
			size += uint32(n)
			fw.Write(buf[:n])
			if err := line(out.Bytes()); err != nil {
				return err
			}
			out.Reset()
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	fw.Close()
	out.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	out.Write(binary.LittleEndian.AppendUint32(nil, size))
	if err := line(out.Bytes()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Package is "NAME VERSION" of an installed package (dpkg-query), as
// apport's Package and Dependencies fields write it.
func Package(name string) (string, error) {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Package} ${Version}", name).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query -W %s: %w", name, err)
	}
	return string(out), nil
}

// Dependencies is apport's Dependencies field of an installed package:
// its transitive Depends and Pre-Depends that are installed, sorted, one
// "NAME VERSION" a line (apport's _transitive_dependencies with
// packaging.get_dependencies: the first alternative that is installed).
func Dependencies(pkg string) (string, error) {
	seen := map[string]bool{pkg: true}
	queue := []string{pkg}
	var lines []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out, err := exec.Command("dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", p).Output()
		if err != nil {
			continue // not installed (a virtual package's provider is named instead)
		}
		for _, dep := range strings.Split(string(out), ",") {
			for _, alt := range strings.Split(dep, "|") {
				name, _, _ := strings.Cut(strings.TrimSpace(alt), " ")
				name, _, _ = strings.Cut(name, ":")
				if name == "" {
					continue
				}
				if seen[name] {
					break
				}
				line, err := Package(name)
				if err != nil {
					continue
				}
				seen[name] = true
				lines = append(lines, line)
				queue = append(queue, name)
				break
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}
