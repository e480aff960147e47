// rust_frames.rs: a Rust program whose frames gdb names from DWARF: a
// closure ({closure#0}) passed to a generic method of a generic type
// (Grid<u32>::fill_with<…>), the standard library's own closures and
// generic functions, and, with "panic", the panic machinery
// (begin_panic_handler, whose linkage name is rust_begin_unwind). fn main
// declares no item of its own (no closure), so gdb's backtrace ends at
// rust_frames::main. A second thread waits, parked. With "segv" a closure
// writes through NULL; with "panic" it indexes out of bounds. Built by
// analysis/realworld with Debian's rustc (TestRustFramesAsGDBNamesThem).
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

struct Grid<T> {
    cells: Vec<T>,
}

impl<T: Copy> Grid<T> {
    #[inline(never)]
    fn fill_with<F: Fn(usize) -> T>(&mut self, f: F) {
        for i in 0..self.cells.len() {
            self.cells[i] = f(i);
        }
    }
}

#[inline(never)]
fn poke(p: *mut u32, v: u32) {
    unsafe { std::ptr::write_volatile(p, v) } // SEGV: p is NULL
}

#[inline(never)]
fn run(mode: &str) -> u32 {
    let mut g = Grid { cells: vec![0u32; 4] };
    let weights = [1u32, 2, 3];
    if mode == "panic" {
        g.fill_with(|i| weights[i + 1]); // PANIC: index 3 of 3
    } else {
        g.fill_with(|i| {
            if i == 2 {
                poke(std::ptr::null_mut(), 7);
            }
            i as u32
        });
    }
    g.cells.iter().sum()
}

static READY: AtomicBool = AtomicBool::new(false);

#[inline(never)]
fn idle() {
    READY.store(true, Ordering::SeqCst);
    loop {
        thread::park();
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    thread::Builder::new().name("idle".into()).spawn(idle).unwrap();
    while !READY.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    println!("{}", run(&mode));
}
