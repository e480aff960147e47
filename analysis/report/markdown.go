package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/model"
)

// notChecked labels what the source inventory (`faultline sources`) fills.
const notChecked = "not checked (run `faultline sources`)"

// Markdown writes the crash report in the structure people write by hand:
// signal, crashing thread, context, determinism, call chain, crashing
// instruction, environment, root cause, evidence, upstream fix status and
// next steps. determinism is the many-core verdict ("" for one core).
func Markdown(w io.Writer, c *model.Crash, determinism string) error {
	p := &printer{w: w}
	writeMarkdown(p, c, determinism, "##")
	return p.err
}

func writeMarkdown(p *printer, c *model.Crash, determinism, h string) {
	cls := c.Classification
	if cls == nil {
		cls = &model.Classification{Kind: model.KindUnknown, CulpritFrame: -1} // not classified: nothing to say
	}
	if c.GPU != nil {
		writeGPUMarkdown(p, c, determinism, h)
		return
	}
	p.f("%s Coredump Analysis: %s\n\n", h, c.Dump.Path)
	// Two trailing spaces: a markdown hard line break.
	p.f("**Crash signal:** %s  \n", signalLine(c))
	p.f("**Crashing thread:** %s  \n", crashingThreadLine(c))
	p.f("**Crash context:** %s  \n", contextLine(cls))
	if determinism == "" {
		determinism = classify.SingleOccurrence
	}
	p.f("**Determinism:** %s  \n", determinism)
	p.f("**Kind:** `%s`%s  \n", cls.Kind, reraisedNote(cls))
	p.f("**Signature:** `%s`\n\n", cls.Signature)

	callChainSection(p, c, cls, h)

	p.f("%s# Crashing instruction\n\n", h)
	instruction(p, c)

	p.f("%s# Environment\n\n", h)
	environment(p, c)

	p.f("%s# Root cause hypothesis\n\n", h)
	rootCause(p, c)

	p.f("%s# Evidence\n\n", h)
	for _, e := range cls.Evidence {
		p.f("- %s\n", e)
	}
	if cls.Message != "" {
		p.f("\nMessage recovered from the core:\n\n```\n%s\n```\n", cls.Message)
	}
	p.f("\n")
	threadsSection(p, c)

	p.f("%s# Upstream fix status\n\n", h)
	p.f("%s.\n\n", upperFirst(notChecked))

	p.f("%s# Recommended next steps\n\n", h)
	for i, s := range nextSteps(c, determinism) {
		p.f("%d. %s\n", i+1, s)
	}
	problemsSection(p, c, h)
}

// callChainSection writes the call chain of the crashing thread, or for a
// live dump of the threads holding the locks of a deadlock.
func callChainSection(p *printer, c *model.Crash, cls *model.Classification, h string) {
	chainThreads := []model.Thread{}
	if t := c.CrashingThread(); t != nil && !liveDump(c) {
		chainThreads = append(chainThreads, *t)
	}
	for _, l := range cls.Locks {
		if liveDump(c) {
			if t := c.Thread(l.Thread); t != nil {
				chainThreads = append(chainThreads, *t)
			}
		}
	}
	p.f("%s# Crash call chain\n\n", h)
	for _, t := range chainThreads {
		if len(chainThreads) > 1 {
			p.f("Thread %d:\n\n", t.ID)
		}
		culprit := -1
		if t.Crashed {
			culprit = cls.CulpritFrame
		}
		callChain(p, c, t, culprit)
	}
	if len(chainThreads) == 0 {
		p.f("No crashing thread.\n\n")
	}
	if anyComponentMissing(c) {
		p.f("_Components: %s._\n\n", notChecked)
	}
}

// problemsSection lists the problems met while reading the dump, if any.
func problemsSection(p *printer, c *model.Crash, h string) {
	if len(c.Problems) == 0 {
		return
	}
	p.f("\n%s# Problems while reading the dump\n\n", h)
	for _, pr := range c.Problems {
		if pr.Module != "" {
			p.f("- `%s`: %s\n", filepath.Base(pr.Module), pr.Message)
		} else {
			p.f("- %s\n", pr.Message)
		}
	}
}

// liveDump reports whether the core was taken from a running process
// (gcore stops it with SIGSTOP) rather than written by a crash.
func liveDump(c *model.Crash) bool {
	return (c.Signal == nil && !notesCutBeforeThreads(c)) || (c.Signal != nil && c.Signal.Number == 19)
}

// notesCutBeforeThreads reports a truncated core whose notes end before
// the first thread's registers and signal: nothing says it was live.
func notesCutBeforeThreads(c *model.Crash) bool {
	in := c.Dump.Incomplete
	return in != nil && in.NotesCut && len(c.Threads) == 0
}

func signalLine(c *model.Crash) string {
	s := c.Signal
	if notesCutBeforeThreads(c) {
		return "unknown: the core is truncated inside its notes, before the first thread's registers and signal"
	}
	if liveDump(c) {
		return "none: the core was dumped from a live process (gcore), not by a crash"
	}
	out := s.Name
	if d := model.SignalDescription(s.Number); d != s.Name {
		out += " (" + d + ")"
	}
	if s.Code != "" {
		out += ", " + s.Code
	}
	if s.Address != "" {
		out += " at address " + s.Address
	}
	if s.Sender != 0 {
		out += fmt.Sprintf(", sent by pid %d", s.Sender)
		if s.SenderUID != nil && s.Sender != c.Dump.PID {
			out += fmt.Sprintf(" (uid %d)", *s.SenderUID)
		}
		if s.Sender == c.Dump.PID {
			out += " (itself)"
		}
	}
	return out
}

func crashingThreadLine(c *model.Crash) string {
	t := c.CrashingThread()
	if len(c.Threads) == 0 {
		return "none: no thread is in the dump"
	}
	if t == nil || liveDump(c) {
		return fmt.Sprintf("none (%d threads; the blocked ones are below)", len(c.Threads))
	}
	role := "worker thread"
	if t.ID == c.Dump.PID {
		role = "main thread"
	}
	if t.Name != "" {
		role = fmt.Sprintf("%q, %s", t.Name, role)
	}
	if cls := c.Classification; cls != nil && cls.Context == model.ContextExitTime {
		role += ", running exit handlers"
	}
	return fmt.Sprintf("Thread %d (%s) of %d", t.ID, role, len(c.Threads))
}

func contextLine(cls *model.Classification) string {
	switch cls.Context {
	case model.ContextExitTime:
		return "exit-time cleanup (exit handlers, static destructors)"
	case model.ContextModuleLoad:
		return "module load (dlopen, library constructors)"
	case model.ContextSignalHandler:
		return "signal handler (the crash happened inside a handler)"
	}
	return "runtime (while the program ran: not loading a library, exiting or in a signal handler)"
}

// handlerOnStack reports whether the crashing thread's stack has a signal
// handler's frame ("<signal handler called>").
func handlerOnStack(c *model.Crash) bool {
	t := c.Thread(c.CrashingThreadID)
	if t == nil {
		return false
	}
	for _, f := range t.Frames {
		if f.Signal || f.Function == model.SignalFrameName {
			return true
		}
	}
	return false
}

func reraisedNote(cls *model.Classification) string {
	if cls.Reraised {
		return " (the signal was caught by a handler and re-raised)"
	}
	return ""
}

// maxChainRows bounds the call chain table (recursion has 30,000 frames).
const maxChainRows = 40

func callChain(p *printer, c *model.Crash, t model.Thread, culprit int) {
	p.f("| Frame | Function | Source | Component |\n|---|---|---|---|\n")
	frames := t.Frames
	elided := 0
	if len(frames) > maxChainRows {
		elided = len(frames) - maxChainRows
		frames = append(append([]model.Frame(nil), frames[:maxChainRows-5]...), frames[len(frames)-5:]...)
	}
	for i, f := range frames {
		if elided > 0 && i == maxChainRows-5 {
			p.f("| … | %d more frames | | |\n", elided)
		}
		idx := fmt.Sprintf("#%d", f.Index)
		fn := f.Function
		if fn == "" {
			fn = "??"
		}
		fn = "`" + escapeCell(fn) + "`"
		if f.Inlined {
			fn += " (inlined)"
		}
		if f.Index == culprit {
			idx = "**" + idx + "**"
			fn += " ← culprit"
		}
		src := "-"
		if f.File != "" {
			src = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		p.f("| %s | %s | %s | %s |\n", idx, fn, escapeCell(src), escapeCell(componentCell(c, f)))
	}
	p.f("\n")
}

func componentCell(c *model.Crash, f model.Frame) string {
	if f.Signal {
		return "kernel signal frame"
	}
	if f.Module == "" {
		return "-"
	}
	for _, m := range c.Modules {
		if m.Path == f.Module && m.Component != nil && m.Component.Name != "" {
			s := m.Component.Name
			if m.Component.Version != "" {
				s += " " + m.Component.Version
			}
			return s
		}
	}
	return filepath.Base(f.Module)
}

func anyComponentMissing(c *model.Crash) bool {
	for _, m := range c.Modules {
		if m.Component == nil {
			return true
		}
	}
	return false
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func instruction(p *printer, c *model.Crash) {
	in := c.Instruction
	if liveDump(c) {
		p.f("Not applicable: no thread faulted (a live process was dumped).\n\n")
		return
	}
	if in == nil {
		p.f("Not available (no faulting thread or no registers).\n\n")
		return
	}
	if cls := c.Classification; cls != nil && cls.Kind == model.KindKilled {
		p.f("None: the signal was sent, not raised by an instruction. The crashing thread was here when it arrived:\n\n")
	}
	p.f("```\n=> %s:\t%s\n", in.PC, in.Text)
	if in.MemoryOperand != "" {
		p.f("   %s of %s", orDash(in.Access), in.MemoryOperand)
		if in.EffectiveAddress != "" {
			p.f(" = %s", in.EffectiveAddress)
		}
		p.f("\n")
	}
	p.f("\n")
	names := []string{"rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		"eip", "esp", "ebp", "eax", "ebx", "ecx", "edx", "esi", "edi"} // x86-64, then i386
	col := 0
	for _, r := range names {
		v, ok := in.Registers[r]
		if !ok {
			continue
		}
		p.f("%-4s %-18s", r, v)
		col++
		if col%3 == 0 {
			p.f("\n")
		} else {
			p.f("  ")
		}
	}
	if col%3 != 0 {
		p.f("\n")
	}
	p.f("```\n\n")
	if cls := c.Classification; cls != nil && cls.Reraised && cls.Kind != model.KindKilled {
		if handlerOnStack(c) {
			p.f("This is the re-raise inside the handler; the original faulting instruction and its registers are in the evidence below.\n\n")
		} else {
			p.f("This is the faulting instruction: the handler that caught the fault re-raised the signal and returned to it.\n\n")
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "access"
	}
	return s
}

func environment(p *printer, c *model.Crash) {
	p.f("| Module | Build ID | Component | Version | Git Hash |\n|---|---|---|---|---|\n")
	for _, m := range c.Modules {
		if m.Path == "[vdso]" {
			continue
		}
		name, version, rev := notChecked, "-", "-"
		if comp := m.Component; comp != nil {
			name, version, rev = orDash2(comp.Name), orDash2(comp.Version), orDash2(comp.Revision)
		}
		id := m.BuildID
		if len(id) > 12 {
			id = id[:12]
		}
		p.f("| %s | %s | %s | %s | %s |\n", escapeCell(m.Path), orDash2(id), name, version, rev)
	}
	p.f("\n")
	if c.Dump.Command != "" {
		p.f("Command line: `%s` (pid %d)\n\n", c.Dump.Command, c.Dump.PID)
	}
}

func orDash2(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rootCause(p *printer, c *model.Crash) {
	cls := c.Classification
	p.f("%s\n\n", cls.Summary)
	switch cls.Context {
	case model.ContextExitTime:
		p.f("The crash happens while the process exits (static destructors, atexit handlers). Exit-time crashes are often the symptom of state corrupted earlier — by a data race during normal operation, or by destroying objects in the wrong order (one static object used after another has been destroyed).\n\n")
	case model.ContextSignalHandler:
		p.f("The crash happened inside a signal handler, while another signal was being handled: only async-signal-safe functions may be called there.\n\n")
	case model.ContextModuleLoad:
		p.f("The crash happens while a shared library is loaded and its constructors run.\n\n")
	}
	switch {
	case cls.Reraised && handlerOnStack(c):
		p.f("A signal handler caught the original fault and re-raised it; the frames above `<signal handler called>` are the handler, and the culprit lies past them.\n\n")
	case cls.Reraised:
		p.f("A signal handler caught the original signal, raised it again and returned (as the crash handlers of libgfortran, Open MPI and R do); the signal was delivered again where the process was, so the stack shows no handler, and the core records the signal as sent by the process itself. What the handler caught is in the evidence.\n\n")
	}
	for _, f := range cls.Findings {
		p.f("**%s:** %s\n\n", f.Kind, f.Summary)
	}
}

func threadsSection(p *printer, c *model.Crash) {
	cls := c.Classification
	if len(cls.Locks) > 0 {
		p.f("Threads waiting on mutexes:\n\n| Thread | Mutex | Address | Held by |\n|---|---|---|---|\n")
		for _, l := range cls.Locks {
			owner := "unknown"
			if l.Owner != 0 {
				owner = fmt.Sprintf("thread %d", l.Owner)
			}
			p.f("| %d | %s | %s | %s |\n", l.Thread, orDash2(l.Name), l.Mutex, owner)
		}
		p.f("\n")
	}
	groups := GroupThreads(c)
	if len(c.Threads) > 1 {
		p.f("Threads: %d in %d groups of identical stacks.\n\n", len(c.Threads), len(groups))
		p.f("| Threads | Top frame | Own frame |\n|---|---|---|\n")
		for _, g := range groups {
			t := g.Threads[0]
			ids := make([]string, 0, len(g.Threads))
			for _, o := range g.Threads {
				ids = append(ids, fmt.Sprint(o.ID))
			}
			label := abbreviate(ids, 8)
			if t.Crashed && !liveDump(c) {
				label += " (crashed)"
			}
			top, own := "-", "-"
			if len(t.Frames) > 0 {
				top = "`" + escapeCell(shortName(t.Frames[0].Function)) + "`"
			}
			for _, f := range t.Frames {
				if f.Module != "" && !isSystemModule(f.Module) && f.Function != "" && !strings.HasPrefix(f.File, "/usr/include") {
					own = "`" + escapeCell(shortName(f.Function)) + "`"
					if f.File != "" {
						own += fmt.Sprintf(" %s:%d", filepath.Base(f.File), f.Line)
					}
					break
				}
			}
			p.f("| %s | %s | %s |\n", label, top, own)
		}
		p.f("\n")
	}
}

// shortName drops template arguments from long C++ names for tables.
func shortName(fn string) string {
	if fn == "" {
		return "??"
	}
	if len(fn) <= 60 {
		return fn
	}
	var b strings.Builder
	depth := 0
	for _, r := range fn {
		switch {
		case r == '<':
			if depth == 0 {
				b.WriteString("<…>")
			}
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isSystemModule(path string) bool {
	base := filepath.Base(path)
	for _, p := range []string{"libc.so", "ld-linux", "libstdc++", "libgcc_s", "libm.so", "libpthread", "[vdso]"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// nextSteps recommends what to do: the kind's own steps (classify.Kinds),
// then by findings, determinism and context.
func nextSteps(c *model.Crash, determinism string) []string {
	cls := c.Classification
	where := "the culprit frame"
	if t := c.CrashingThread(); t != nil && cls.CulpritFrame >= 0 && cls.CulpritFrame < len(t.Frames) {
		f := t.Frames[cls.CulpritFrame]
		where = "`" + shortName(f.Function) + "`"
		if f.File != "" {
			where += fmt.Sprintf(" at %s:%d", f.File, f.Line)
		}
	}
	out := classify.KindSteps(c, where)
	for _, f := range cls.Findings {
		if f.Kind == "likely-race" {
			out = append(out, "Rebuild with -fsanitize=thread (TSAN) and run the workload: the racing threads ("+joinIntsReport(f.Threads)+") share the container without a lock.")
		}
	}
	switch determinism {
	case classify.NonDeterministic:
		out = append(out, "The crash is non-deterministic: the cores show symptoms; build with ASAN and TSAN to find the earlier write that corrupts the data.")
	case classify.Deterministic:
		out = append(out, "The crash is deterministic: reproduce it under a debugger or rr and fix the culprit frame.")
	default:
		out = append(out, "Run the program a few times and analyze all cores together (`faultline analyze CORE1 CORE2 …` or a directory) to tell a deterministic bug from a race.")
	}
	if cls.Context == model.ContextExitTime {
		out = append(out, "Check the destruction order of static objects (and objects kept alive past exit by other libraries).")
	}
	out = append(out, "Fetch the exact sources of each component and check upstream fixes with `faultline sources`.")
	return out
}

func joinIntsReport(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// MarkdownSet writes the many-core report: the verdict on determinism,
// the signature groups, then one full report per group.
func MarkdownSet(w io.Writer, s *classify.Set) error {
	p := &printer{w: w}
	p.f("# Crash report: %d cores\n\n", len(s.Crashes))
	p.f("**Determinism:** %s — %s\n\n", s.Determinism, s.Verdict)
	if len(s.Programs) > 0 {
		p.f("**Programs:** %s\n\n", strings.Join(s.Programs, ", "))
	}
	p.f("| # | Signature | Kind | Culprit | Cores |\n|---|---|---|---|---|\n")
	for i, g := range s.Groups {
		dumps := make([]string, len(g.Dumps))
		for j, d := range g.Dumps {
			dumps[j] = filepath.Base(d)
		}
		sort.Strings(dumps)
		sig := g.Signature
		if g.Program != "" {
			sig = g.Program + ": " + sig
		}
		p.f("| %d | `%s` | %s | %s | %d: %s |\n", i+1, escapeCell(sig), g.Kind, escapeCell(orDash2(g.Culprit)), len(g.Dumps), strings.Join(dumps, ", "))
	}
	p.f("\n")
	for _, f := range s.Findings {
		p.f("**%s:** %s\n\n", f.Kind, f.Summary)
	}
	for _, f := range s.Failed {
		p.f("- could not open %s: %s\n", f.Dump, f.Error)
	}
	if len(s.Failed) > 0 {
		p.f("\n")
	}
	for i, g := range s.Groups {
		p.f("---\n\n## Group %d: `%s` (%d cores)\n\n", i+1, escapeCell(g.Signature), len(g.Dumps))
		writeMarkdown(p, g.Crashes[0], s.Determinism, "###")
		p.f("\n")
	}
	return p.err
}
