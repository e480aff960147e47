package capture

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/elfcore"
)

// mapping is one memory mapping of the process, from /proc/PID/smaps.
type mapping struct {
	start, end, offset uint64
	perms              string
	inode              uint64
	path               string
	vmFlags            []string // smaps VmFlags: rd wr sh io dd ht ...
	anon               bool     // holds private anonymous (copied-on-write) pages
	dump               uint64   // bytes of it the core holds, from start
}

// coredump_filter bits (core(5)).
const (
	filterAnonPrivate   = 1 << 0
	filterAnonShared    = 1 << 1
	filterMappedPrivate = 1 << 2
	filterMappedShared  = 1 << 3
	filterELFHeaders    = 1 << 4
	filterHugePrivate   = 1 << 5
	filterHugeShared    = 1 << 6
	defaultFilter       = 0x33 // the kernel's default: anonymous memory, ELF headers, private huge pages
)

// coredumpFilter reads the process's /proc/PID/coredump_filter, the kernel's
// default where it cannot.
func coredumpFilter(pid int) uint32 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/coredump_filter", pid))
	if err != nil {
		return defaultFilter
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 32)
	if err != nil {
		return defaultFilter
	}
	return uint32(v)
}

// readMappings reads the process's mappings and decides what of each the
// core holds, as the kernel would for a core of it.
func readMappings(pid int, mem io.ReaderAt) ([]mapping, error) {
	maps, err := readSmaps(pid)
	if err != nil {
		return nil, err
	}
	filter := coredumpFilter(pid)
	for i := range maps {
		maps[i].dump = maps[i].kernelDumpSize(filter, mem)
	}
	return maps, nil
}

// kernelDumpSize is the kernel's vma_dump_size (linux fs/coredump.c): the
// special mappings (vdso, vvar, vsyscall) whole; nothing of VM_DONTDUMP or
// VM_IO areas; shared memory by the filter's shared bits; every private
// mapping that has been written to (RELRO pages, .data, .got, heaps,
// stacks, pages a debugger patched) whole; of an unwritten file mapping,
// the first page when it is an ELF header (build-ids) — the rest is in
// the file.
func (m *mapping) kernelDumpSize(filter uint32, mem io.ReaderAt) uint64 {
	size := m.end - m.start
	file := m.inode != 0
	switch {
	case m.special():
		return size
	case m.has("dd"):
		return 0
	case m.has("ht"):
		if m.has("sh") && filter&filterHugeShared != 0 || !m.has("sh") && filter&filterHugePrivate != 0 {
			return size
		}
		return 0
	case m.has("io"):
		return 0
	case m.has("sh"):
		// An anonymous shared mapping is a file without links (shmem).
		unlinked := !file || strings.HasSuffix(m.path, " (deleted)")
		if unlinked && filter&filterAnonShared != 0 || !unlinked && filter&filterMappedShared != 0 {
			return size
		}
		return 0
	case m.anon && filter&filterAnonPrivate != 0:
		return size
	case !file:
		return 0
	case filter&filterMappedPrivate != 0:
		return size
	case filter&filterELFHeaders != 0 && m.offset == 0 && m.has("rd") && m.elfHeader(mem):
		return min(size, 4096)
	}
	return 0
}

// special says whether the kernel names the mapping itself (vdso, vvar,
// vsyscall, uprobes): those are always dumped. [heap], [stack] and named
// anonymous memory are ordinary memory.
func (m *mapping) special() bool {
	if !strings.HasPrefix(m.path, "[") || m.inode != 0 {
		return false
	}
	for _, p := range []string{"[heap]", "[stack", "[anon:", "[anon_shmem:"} {
		if strings.HasPrefix(m.path, p) {
			return false
		}
	}
	return true
}

// elfHeader says whether the mapping starts with an ELF header or maps an
// executable file, the kernel's test for dumping a file mapping's first page.
func (m *mapping) elfHeader(mem io.ReaderAt) bool {
	var magic [4]byte
	if n, _ := mem.ReadAt(magic[:], int64(m.start)); n == 4 && string(magic[:]) == "\x7fELF" {
		return true
	}
	st, err := os.Stat(m.path)
	return err == nil && st.Mode()&0o111 != 0
}

func (m *mapping) has(flag string) bool { return slices.Contains(m.vmFlags, flag) }

func (m *mapping) flags() elf.ProgFlag {
	var f elf.ProgFlag
	if m.perms[0] == 'r' {
		f |= elf.PF_R
	}
	if m.perms[1] == 'w' {
		f |= elf.PF_W
	}
	if m.perms[2] == 'x' {
		f |= elf.PF_X
	}
	return f
}

// readSmaps parses /proc/PID/smaps: a maps line per mapping (start-end
// perms offset dev inode path), then "Key: value kB" lines and VmFlags.
func readSmaps(pid int) ([]mapping, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key, val, isField := strings.Cut(line, ":")
		if isField && !strings.Contains(key, " ") && !strings.Contains(key, "-") && len(out) > 0 {
			m := &out[len(out)-1]
			switch key {
			case "VmFlags":
				m.vmFlags = strings.Fields(val)
			case "Anonymous", "Swap":
				if kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64); kb > 0 {
					m.anon = true
				}
			}
			continue
		}
		if m, ok := parseMapsLine(line); ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// parseMapsLine parses "start-end perms offset dev inode path".
func parseMapsLine(line string) (mapping, bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	var m mapping
	var err1, err2 error
	m.start, err1 = strconv.ParseUint(lo, 16, 64)
	m.end, err2 = strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || m.end <= m.start || len(fields[1]) < 4 {
		return mapping{}, false
	}
	m.perms = fields[1]
	m.offset, _ = strconv.ParseUint(fields[2], 16, 64)
	m.inode, _ = strconv.ParseUint(fields[4], 10, 64)
	if len(fields) >= 6 {
		m.path = strings.Join(fields[5:], " ")
	}
	return m, true
}

// readProcIDs reads the process's parent, group and session from
// /proc/PID/stat, for NT_PRSTATUS and NT_PRPSINFO.
func readProcIDs(pid int) elfcore.ProcessIDs {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
	var ids elfcore.ProcessIDs
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 4 {
			ids.PPid, _ = strconv.Atoi(f[1])
			ids.Pgrp, _ = strconv.Atoi(f[2])
			ids.Sid, _ = strconv.Atoi(f[3])
		}
	}
	return ids
}
