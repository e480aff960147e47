package classify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// futexSyscall is futex(2)'s number on x86-64 (arch/x86/entry/syscalls/syscall_64.tbl).
const futexSyscall = 202

// mutexLockFunctions are glibc's pthread_mutex_lock paths (nptl/pthread_mutex_lock.c,
// nptl/lowlevellock.c): a thread asleep in futex(2) under one of them waits
// for the mutex whose __lock word is futex's first argument (%rdi).
var mutexLockFunctions = map[string]bool{
	"pthread_mutex_lock": true, "__pthread_mutex_lock": true, "___pthread_mutex_lock": true,
	"__GI___pthread_mutex_lock": true, "__lll_lock_wait": true, "__GI___lll_lock_wait": true,
	"lll_mutex_lock_optimized": true, "__pthread_mutex_lock_full": true, "pthread_mutex_timedlock": true,
	"__pthread_mutex_clocklock_common": true, "___pthread_mutex_timedlock": true,
}

// pthread_mutex_t on x86-64 (sysdeps/nptl/bits/struct_mutex.h): int __lock;
// unsigned int __count; int __owner; ...
const mutexOwnerOffset = 8

// waitFunctions are where an idle thread sleeps (glibc's names); such a
// thread is not "running inside" the code on its stack. waitPrefixes
// cover the futex and condition-variable internals.
var (
	waitFunctions = map[string]bool{"nanosleep": true, "__GI___nanosleep": true, "clock_nanosleep": true,
		"__GI___clock_nanosleep": true, "__clock_nanosleep": true, "poll": true, "__GI___poll": true, "ppoll": true,
		"epoll_wait": true, "epoll_pwait": true, "select": true, "pselect": true, "__select": true,
		"pthread_join": true, "__pthread_clockjoin_ex": true, "___pthread_join": true, "sem_wait": true,
		"__new_sem_wait_slow64": true, "read": true, "__libc_read": true, "__GI___libc_read": true, "accept": true,
		"sigwait": true, "sigtimedwait": true, "pause": true, "usleep": true, "sleep": true, "__lll_lock_wait": true,
		"__GI___lll_lock_wait": true, "syscall": true, "recv": true, "recvmsg": true, "wait4": true, "waitpid": true}
	waitPrefixes = []string{"__futex", "futex_", "pthread_cond_", "__pthread_cond_", "___pthread_cond_",
		"__GI___futex", "__GI___pthread_cond"}
)

func isWaiting(t model.Thread) bool {
	for i, f := range t.Frames {
		if i > 8 {
			break
		}
		fn := baseName(f.Function)
		if waitFunctions[fn] {
			return true
		}
		for _, w := range waitPrefixes {
			if strings.HasPrefix(fn, w) {
				return true
			}
		}
	}
	return false
}

// threads finds the threads blocked on mutexes and who holds them, wait
// cycles (deadlocks), and data-race red flags.
func (a *analyzer) threads() {
	a.lockWaits()
	if cyc := a.deadlockCycle(); len(cyc) > 0 {
		a.reportDeadlock(cyc)
	} else if (a.cls.Kind == model.KindHang || a.cls.Kind == model.KindKilled) && len(a.cls.Locks) > 0 {
		for _, l := range a.cls.Locks {
			a.evidence("thread %d waits for mutex %s%s", l.Thread, mutexLabel(l), ownerText(l))
		}
	}
	a.raceRedFlags()
	if a.cls.Kind == model.KindHang && a.cls.Summary == "" {
		busy := []string{}
		for _, t := range a.c.Threads {
			if !isWaiting(t) {
				busy = append(busy, fmt.Sprint(t.ID))
			}
		}
		if len(busy) > 0 {
			a.cls.Summary = fmt.Sprintf("Hang: no wait cycle between locks; threads %s were running — look for a busy loop there.", strings.Join(busy, ", "))
		} else {
			a.cls.Summary = "Hang: every thread is waiting and no lock cycle was found; look for a lost wake-up (a condition variable signalled before the wait) or a wait on I/O."
		}
	}
}

// lockWaits fills Locks from each thread's stack and registers.
func (a *analyzer) lockWaits() {
	tr, ok := a.p.(ThreadRegisters)
	if !ok || a.p == nil {
		return
	}
	var addrs []uint64
	for _, t := range a.c.Threads {
		inLock := false
		for i, f := range t.Frames {
			if i > 6 {
				break
			}
			if mutexLockFunctions[baseName(f.Function)] {
				inLock = true
				break
			}
		}
		if !inLock {
			continue
		}
		regs, ok := tr.ThreadRegisters(t.ID)
		if !ok || regs["orig_rax"] != futexSyscall {
			continue
		}
		mutex := regs["rdi"]
		lw := model.LockWait{Thread: t.ID, Mutex: fmt.Sprintf("%#x", mutex)}
		if owner, ok := a.readUint32(mutex + mutexOwnerOffset); ok {
			lw.Owner = int(int32(owner))
		}
		a.cls.Locks = append(a.cls.Locks, lw)
		addrs = append(addrs, mutex)
	}
	if ds, ok := a.p.(DataSymbols); ok && len(addrs) > 0 {
		for i, name := range ds.DataSymbols(addrs) {
			a.cls.Locks[i].Name = name
		}
	}
}

// deadlockCycle follows waits-for edges (thread → the owner of the mutex
// it waits for) and returns the first cycle, in order.
func (a *analyzer) deadlockCycle() []model.LockWait {
	waits := map[int]model.LockWait{}
	for _, l := range a.cls.Locks {
		waits[l.Thread] = l
	}
	ids := make([]int, 0, len(waits))
	for id := range waits {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, start := range ids {
		var path []model.LockWait
		pos := map[int]int{}
		cur := start
		for {
			l, ok := waits[cur]
			if !ok || l.Owner == 0 {
				break
			}
			if i, seen := pos[cur]; seen {
				return path[i:]
			}
			pos[cur] = len(path)
			path = append(path, l)
			cur = l.Owner
		}
	}
	return nil
}

func mutexLabel(l model.LockWait) string {
	if l.Name != "" {
		return fmt.Sprintf("%s (%s)", l.Name, l.Mutex)
	}
	return l.Mutex
}

func ownerText(l model.LockWait) string {
	if l.Owner == 0 {
		return ""
	}
	return fmt.Sprintf(", held by thread %d", l.Owner)
}

// ownFrame names a thread's first frame of program code.
func (a *analyzer) ownFrame(id int) string {
	t := a.c.Thread(id)
	if t == nil {
		return ""
	}
	for _, f := range t.Frames {
		if !isRuntime(f) && !isLibraryTemplate(f) && f.Function != "" {
			return describeFrame(f, baseName(f.Function))
		}
	}
	return ""
}

func (a *analyzer) reportDeadlock(cycle []model.LockWait) {
	a.cls.Kind = model.KindDeadlock
	var steps, ids []string
	var threads []int
	for _, l := range cycle {
		where := a.ownFrame(l.Thread)
		if where != "" {
			where = " in " + where
		}
		a.evidence("thread %d%s is blocked in pthread_mutex_lock on %s, whose owner (pthread_mutex_t.__data.__owner) is thread %d",
			l.Thread, where, mutexLabel(l), l.Owner)
		steps = append(steps, fmt.Sprintf("thread %d%s waits for %s held by thread %d", l.Thread, where, orDefault(l.Name, l.Mutex), l.Owner))
		ids = append(ids, fmt.Sprint(l.Thread))
		threads = append(threads, l.Thread)
	}
	summary := fmt.Sprintf("Deadlock: %s. The threads take the same mutexes in opposite orders; acquire them in one global order (or with std::scoped_lock).", strings.Join(steps, "; "))
	a.cls.Summary = summary
	a.cls.Findings = append(a.cls.Findings, model.Finding{Kind: "deadlock", Threads: threads,
		Summary: fmt.Sprintf("lock-order cycle between threads %s", strings.Join(ids, " and "))})
}

// blockedSignature names the deadlocked (or hung) threads' own frames, for
// the signature.
func (a *analyzer) blockedSignature() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range a.cls.Locks {
		t := a.c.Thread(l.Thread)
		if t == nil {
			continue
		}
		for _, f := range t.Frames {
			if !isRuntime(f) && !isLibraryTemplate(f) && f.Function != "" {
				n := baseName(f.Function)
				if !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// containerMarkers are names of standard containers' internals: a crash in
// them with another thread inside the same code is the seeds' race red flag.
var containerMarkers = []string{"_Hashtable", "_Hash_node", "_Mod_range_hashing", "_M_rehash", "_M_insert_bucket_begin",
	"_M_find_before_node", "_M_remove_bucket_begin", "_M_deallocate_node", "unordered_map", "unordered_set",
	"_Rb_tree", "_M_realloc_insert", "_M_default_append", "std::deque", "_Map_base", "_Hashtable_base"}

func containerCode(fn string) bool {
	for _, m := range containerMarkers {
		if strings.Contains(fn, m) {
			return true
		}
	}
	return false
}

// raceRedFlags reports a likely data race when the crash is in container
// internals or the allocator's checks, or at a misaligned pointer, and
// another thread is running (not waiting) inside the same container code or
// the same function of the program.
func (a *analyzer) raceRedFlags() {
	if len(a.frames) == 0 || len(a.c.Threads) < 2 {
		return
	}
	cu := a.cls.CulpritFrame
	end := len(a.frames)
	if cu >= 0 {
		end = cu + 1
	}
	inContainer, containerFn := false, ""
	for _, f := range a.frames[a.start:end] {
		if containerCode(f.Function) && !inContainer {
			inContainer, containerFn = true, baseName(f.Function)
		}
		if containerCode(baseName(f.Function)) {
			containerFn = baseName(f.Function)
			break
		}
	}
	misaligned := false
	if a.f != nil {
		if _, v, ok := a.f.memBase(); ok && v >= nullLimit && v%8 != 0 && canonical(v) {
			misaligned = true
		}
	}
	redFlag := inContainer || misaligned || a.cls.Kind == model.KindHeapCorruption || a.cls.Kind == model.KindUseAfterFree
	if !redFlag {
		return
	}
	culprit := ""
	if cu >= 0 {
		culprit = baseName(a.frames[cu].Function)
	}
	var others []int
	var where []string
	for _, t := range a.c.Threads {
		if t.Crashed || isWaiting(t) {
			continue
		}
		for _, f := range t.Frames {
			fn := baseName(f.Function)
			if (inContainer && containerCode(f.Function)) || (culprit != "" && fn == culprit) {
				others = append(others, t.ID)
				where = append(where, fmt.Sprintf("thread %d was in %s", t.ID, describeFrame(f, fn)))
				break
			}
		}
	}
	if len(others) == 0 {
		return
	}
	crashed := a.c.CrashingThreadID
	threads := append([]int{crashed}, others...)
	var flags []string
	if inContainer {
		flags = append(flags, fmt.Sprintf("the crash is inside container internals (%s)", containerFn))
	}
	if misaligned {
		_, v, _ := a.f.memBase()
		flags = append(flags, fmt.Sprintf("the pointer %#x is not 8-byte aligned", v))
	}
	if a.cls.Kind == model.KindHeapCorruption {
		flags = append(flags, "glibc found the heap corrupted")
	}
	summary := fmt.Sprintf("likely race: thread %d crashed in %s while %s; %s", crashed, a.where(), strings.Join(where, ", "), strings.Join(flags, ", "))
	a.cls.Findings = append(a.cls.Findings, model.Finding{Kind: "likely-race", Threads: threads, Summary: summary})
	a.evidence("%s", summary)
	if a.cls.Summary != "" {
		a.cls.Summary = strings.TrimSuffix(a.cls.Summary, ".") + fmt.Sprintf(". Likely a data race: thread %s was running the same code unsynchronised — build with -fsanitize=thread to find the racing accesses.", joinInts(others))
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
