package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// liveCore writes an ELF core dump of a live process the way the kernel
// lays one out (linux fs/binfmt_elf.c; the notes of linux/elfcore.h): a
// PT_NOTE with NT_PRSTATUS per thread, NT_PRPSINFO, NT_AUXV and NT_FILE,
// then a PT_LOAD per mapping holding what the kernel would dump of it
// (kernelDumpSize: written-to memory including RELRO pages, so that
// debuggers find .dynamic and the link map; ELF header pages for build-ids).
// Threads are stopped with ptrace for the copy and resumed after.
func liveCore(pid int, path string) (threads int, err error) {
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
	st := readProcStat(pid)
	auxv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))

	var notes bytes.Buffer
	for i, t := range tids {
		writeNote(&notes, 1, prstatus(t, st, &regs[i])) // NT_PRSTATUS
		if i == 0 {
			writeNote(&notes, 3, prpsinfo(pid, st))     // NT_PRPSINFO
			writeNote(&notes, 6, auxv)                  // NT_AUXV
			writeNote(&notes, 0x46494c45, ntFile(maps)) // NT_FILE
		}
	}
	return len(tids), writeCoreFile(path, notes.Bytes(), maps, mem)
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

func writeNote(w *bytes.Buffer, typ uint32, desc []byte) {
	name := "CORE\x00"
	binary.Write(w, binary.LittleEndian, [3]uint32{uint32(len(name)), uint32(len(desc)), typ})
	w.WriteString(name)
	w.Write(make([]byte, pad4(len(name))))
	w.Write(desc)
	w.Write(make([]byte, pad4(len(desc))))
}

func pad4(n int) int { return (4 - n%4) % 4 }

// prstatus is struct elf_prstatus for x86-64 (336 bytes): pr_pid at 32,
// pr_ppid 36, pr_pgrp 40, pr_sid 44, pr_reg (user_regs_struct, which is
// syscall.PtraceRegs's layout) at 112.
func prstatus(tid int, st procStat, regs *syscall.PtraceRegs) []byte {
	b := make([]byte, 336)
	binary.LittleEndian.PutUint32(b[32:], uint32(tid))
	binary.LittleEndian.PutUint32(b[36:], uint32(st.ppid))
	binary.LittleEndian.PutUint32(b[40:], uint32(st.pgrp))
	binary.LittleEndian.PutUint32(b[44:], uint32(st.sid))
	var r bytes.Buffer
	binary.Write(&r, binary.LittleEndian, regs)
	copy(b[112:], r.Bytes())
	return b
}

// prpsinfo is struct elf_prpsinfo for x86-64 (136 bytes): pr_pid at 24,
// pr_ppid 28, pr_pgrp 32, pr_sid 36, pr_fname[16] at 40, pr_psargs[80] at 56.
func prpsinfo(pid int, st procStat) []byte {
	b := make([]byte, 136)
	b[0], b[1] = 1, 'S' // sleeping
	binary.LittleEndian.PutUint32(b[24:], uint32(pid))
	binary.LittleEndian.PutUint32(b[28:], uint32(st.ppid))
	binary.LittleEndian.PutUint32(b[32:], uint32(st.pgrp))
	binary.LittleEndian.PutUint32(b[36:], uint32(st.sid))
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	copy(b[40:55], bytes.TrimSpace(comm))
	args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args = bytes.ReplaceAll(bytes.TrimRight(args, "\x00"), []byte{0}, []byte{' '})
	copy(b[56:135], args)
	return b
}

// ntFile is the NT_FILE note: count, page size, (start, end, page offset)
// per file mapping, then the paths.
func ntFile(maps []mapping) []byte {
	var files []mapping
	for _, m := range maps {
		if strings.HasPrefix(m.path, "/") && !strings.HasSuffix(m.path, " (deleted)") {
			files = append(files, m)
		}
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, [2]uint64{uint64(len(files)), 4096})
	for _, m := range files {
		binary.Write(&b, le, [3]uint64{m.start, m.end, m.offset / 4096})
	}
	for _, m := range files {
		b.WriteString(m.path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// writeCoreFile writes the ELF header, the program headers, the notes and
// each mapping's dumped bytes (page-aligned, as the kernel does).
func writeCoreFile(path string, notes []byte, maps []mapping, mem io.ReaderAt) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	le := binary.LittleEndian
	const ehSize, phSize = 64, 56
	nph := 1 + len(maps)
	off := uint64(ehSize + phSize*nph)
	noteOff := off
	off += uint64(len(notes))
	off = (off + 4095) &^ 4095

	eh := make([]byte, ehSize)
	copy(eh, "\x7fELF\x02\x01\x01") // 64-bit, little-endian, current version, SYSV ABI
	le.PutUint16(eh[16:], 4)        // ET_CORE
	le.PutUint16(eh[18:], 62)       // EM_X86_64
	le.PutUint32(eh[20:], 1)
	le.PutUint64(eh[32:], ehSize) // e_phoff
	le.PutUint16(eh[52:], ehSize)
	le.PutUint16(eh[54:], phSize)
	le.PutUint16(eh[56:], uint16(min(nph, 0xffff)))
	w.Write(eh)

	ph := func(typ, flags uint32, offset, vaddr, filesz, memsz, align uint64) {
		b := make([]byte, phSize)
		le.PutUint32(b[0:], typ)
		le.PutUint32(b[4:], flags)
		le.PutUint64(b[8:], offset)
		le.PutUint64(b[16:], vaddr)
		le.PutUint64(b[32:], filesz)
		le.PutUint64(b[40:], memsz)
		le.PutUint64(b[48:], align)
		w.Write(b)
	}
	ph(4, 0, noteOff, 0, uint64(len(notes)), 0, 4) // PT_NOTE
	offsets := make([]uint64, len(maps))
	for i, m := range maps {
		offsets[i] = off
		size := m.dump
		ph(1, m.flags(), off, m.start, size, m.end-m.start, 4096) // PT_LOAD
		off += size
	}
	w.Write(notes)
	pos := noteOff + uint64(len(notes))
	buf := make([]byte, 1<<20)
	for i, m := range maps {
		w.Write(make([]byte, offsets[i]-pos))
		pos = offsets[i]
		for done := uint64(0); done < m.dump; {
			chunk := buf[:min(uint64(len(buf)), m.dump-done)]
			n, _ := mem.ReadAt(chunk, int64(m.start+done))
			clear(chunk[n:]) // unreadable pages read as zeros, as in the kernel's dump
			w.Write(chunk)
			done += uint64(len(chunk))
		}
		pos += m.dump
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
