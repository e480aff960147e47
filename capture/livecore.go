package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/faultline-dev/faultline/analysis/elfcore"
)

// LiveCore writes an ELF core dump of a live process the way the kernel
// lays one out (linux fs/binfmt_elf.c; the notes of linux/elfcore.h): a
// PT_NOTE with NT_PRSTATUS per thread, NT_PRPSINFO, NT_AUXV and NT_FILE,
// then a PT_LOAD per mapping holding what the kernel would dump of it
// (kernelDumpSize: written-to memory including RELRO pages, so that
// debuggers find .dynamic and the link map; ELF header pages for build-ids).
// Threads are stopped with ptrace for the copy and resumed after.
func LiveCore(pid int, path string) (threads int, err error) {
	// ptrace requests must come from the thread that attached.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	tids, err := attachAll(pid)
	defer func() {
		for _, t := range tids {
			syscall.PtraceDetach(t)
		}
	}()
	if err != nil {
		return 0, err
	}
	regs := make([]syscall.PtraceRegs, len(tids))
	for i, t := range tids {
		if err := syscall.PtraceGetRegs(t, &regs[i]); err != nil {
			return 0, fmt.Errorf("reading thread %d's registers: %w", t, err)
		}
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	maps, err := readMappings(pid, mem)
	if err != nil {
		return 0, err
	}
	st := readProcIDs(pid)
	auxv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))

	var notes bytes.Buffer
	for i, t := range tids {
		var r bytes.Buffer
		binary.Write(&r, binary.LittleEndian, &regs[i]) // user_regs_struct
		elfcore.AppendNote(&notes, elfcore.NT_PRSTATUS, elfcore.PRStatusX86(t, st, r.Bytes()))
		if i == 0 {
			elfcore.AppendNote(&notes, elfcore.NT_PRPSINFO, prpsinfo(pid, st))
			elfcore.AppendNote(&notes, elfcore.NT_AUXV, auxv)
			elfcore.AppendNote(&notes, elfcore.NT_FILE, elfcore.NTFileDesc(fileMappings(maps)))
		}
	}
	return len(tids), elfcore.WriteCore(path, notes.Bytes(), loadSegments(maps), mem)
}

// attachAll stops every thread of pid (PTRACE_ATTACH), repeating until no
// new thread appears.
func attachAll(pid int) ([]int, error) {
	attached := map[int]bool{}
	var order []int
	for round := 0; round < 100; round++ {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return order, fmt.Errorf("process %d: %w", pid, err)
		}
		added := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || attached[tid] {
				continue
			}
			if err := syscall.PtraceAttach(tid); err != nil {
				if errors.Is(err, syscall.ESRCH) {
					continue // exited meanwhile
				}
				return order, fmt.Errorf("ptrace attach to thread %d: %w (needs the same user, CAP_SYS_PTRACE, or kernel.yama.ptrace_scope 0)", tid, err)
			}
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(tid, &ws, 0x40000000, nil); err != nil { // __WALL
				return order, fmt.Errorf("waiting for thread %d to stop: %w", tid, err)
			}
			attached[tid] = true
			order = append(order, tid)
			added = true
		}
		if !added {
			// The main thread (tid == pid) first, as the kernel writes it.
			sort.SliceStable(order, func(i, j int) bool { return order[i] == pid && order[j] != pid })
			return order, nil
		}
	}
	return order, errors.New("threads keep appearing; gave up stopping them all")
}

// prpsinfo is the NT_PRPSINFO descriptor of process pid: its ids, command
// name and arguments from /proc.
func prpsinfo(pid int, ids elfcore.ProcessIDs) []byte {
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args = bytes.ReplaceAll(bytes.TrimRight(args, "\x00"), []byte{0}, []byte{' '})
	return elfcore.PRPSInfoX86(pid, ids, bytes.TrimSpace(comm), args)
}

// fileMappings are the NT_FILE entries of maps: mappings of files that
// still exist.
func fileMappings(maps []mapping) []elfcore.FileMapping {
	var files []elfcore.FileMapping
	for _, m := range maps {
		if strings.HasPrefix(m.path, "/") && !strings.HasSuffix(m.path, " (deleted)") {
			files = append(files, elfcore.FileMapping{Start: m.start, End: m.end, Offset: m.offset, Path: m.path})
		}
	}
	return files
}

// loadSegments are the PT_LOADs of maps, each with the bytes the kernel
// would dump of it.
func loadSegments(maps []mapping) []elfcore.LoadSegment {
	loads := make([]elfcore.LoadSegment, len(maps))
	for i, m := range maps {
		loads[i] = elfcore.LoadSegment{Vaddr: m.start, Memsz: m.end - m.start, Filesz: m.dump, Flags: m.flags()}
	}
	return loads
}
