package job

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"
)

// synthJobPaths builds the call paths of a training-job rank: the main
// thread in a collective and 255 helper threads in seven states, frames
// named and placed like a C++/CUDA/Python stack.
func synthJobPaths(rank int) ([][]string, []int) {
	frames := func(prefix string, depth int) []string {
		p := make([]string, depth)
		for i := range p {
			p[i] = fmt.Sprintf("%s::detail::function_number_%02d<float, at::Tensor>", prefix, i)
		}
		return p
	}
	main := frames("c10d::ProcessGroupNCCL::allreduce", 34)
	if rank%2500 == 7 { // four ranks stuck elsewhere
		main = frames("torch::autograd::Engine::evaluate_function", 30)
	}
	paths := [][]string{main,
		frames("c10::ThreadPool::main_loop", 12), frames("ncclProxyProgress", 9),
		frames("torch::utils::data::worker_loop", 22), frames("c10d::ProcessGroupNCCL::ncclCommWatchdog", 14),
		frames("pthread_cond_timedwait_gloo", 11), frames("cudaStreamSynchronize_helper", 18),
		frames("PyEval_EvalFrameDefault_python_gc", 40)}
	threads := []int{1, 128, 32, 40, 8, 16, 15, 16}
	return paths, threads
}

// writeSynthJob writes n rank summaries into dir and returns their total size.
func writeSynthJob(tb testing.TB, dir string, n int) int64 {
	var total int64
	var buf bytes.Buffer
	for r := 0; r < n; r++ {
		paths, threads := synthJobPaths(r)
		s := synthRank(r, fmt.Sprintf("node%04d", r/8), paths, threads)
		w := n
		s.Job.WorldSize = &w
		buf.Reset()
		if err := Write(&buf, s); err != nil {
			tb.Fatal(err)
		}
		total += int64(buf.Len())
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank-%05d.json", r)), buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return total
}

// peakSampler records the largest Go memory (heap, stacks, runtime) seen
// while it runs.
type peakSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func startPeakSampler() *peakSampler {
	p := &peakSampler{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		for {
			metrics.Read(sample)
			p.peak = max(p.peak, sample[0].Value.Uint64())
			select {
			case <-p.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return p
}

func (p *peakSampler) finish() uint64 {
	close(p.stop)
	p.done.Wait()
	return p.peak
}

// BenchmarkMerge10k reads and merges 10,000 rank summaries of 256 threads
// each from a directory (what `faultline job report DIR` does), and reports
// the wall time per merge and the peak Go memory (issue 16: ≤ 2 s, ≤ 1 GiB).
const benchRanks = 10000

func BenchmarkMerge10k(b *testing.B) {
	dir := b.TempDir()
	size := writeSynthJob(b, dir, benchRanks)
	runtime.GC()
	sampler := startPeakSampler()
	cpu0 := cpuTime()
	b.ResetTimer()
	var rep *Report
	for b.Loop() {
		var err error
		if rep, err = MergeDir(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := (cpuTime() - cpu0) / time.Duration(b.N)
	peak := sampler.finish()
	if rep.Ranks != benchRanks || len(rep.Classes) != 2 || rep.Classes[0].Ranks != "7,2507,5007,7507" || len(rep.Problems) != 0 {
		b.Fatalf("merge: %d ranks, classes %+v, problems %v", rep.Ranks, rep.Classes, rep.Problems)
	}
	b.ReportMetric(cpu.Seconds(), "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(size)/(1<<20), "input-MiB")
	b.Logf("%d ranks x 256 threads: %.1f MiB of summaries; per merge %v wall, %v CPU; peak Go memory %.0f MiB",
		benchRanks, float64(size)/(1<<20), b.Elapsed()/time.Duration(b.N), cpu, float64(peak)/(1<<20))
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecode decodes one synthetic rank summary of 256 threads (the
// per-file cost of BenchmarkMerge10k without the file system).
func BenchmarkDecode(b *testing.B) {
	paths, threads := synthJobPaths(1)
	var buf bytes.Buffer
	if err := Write(&buf, synthRank(1, "node0001", paths, threads)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}
