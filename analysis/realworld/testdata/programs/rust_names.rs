// rust_names.rs: a Rust program (panic=abort). With no argument it panics
// in an unwrap three calls deep, so the crashing stack holds the standard
// library's __rust_start_panic and __rust_end_short_backtrace, whose names
// keep both leading underscores. With "segv" it writes through a NULL
// pointer in a generic function called from a closure: frames of the
// program's own code (v0 names when built so) down to the standard
// library's lang_start. Built by analysis/realworld with Debian's rustc.
struct Config {
    port: u16,
}

#[inline(never)]
fn parse_port(s: &str) -> u16 {
    s.parse::<u16>().unwrap() // PANIC: "x" is not a number
}

#[inline(never)]
fn load(args: &[String]) -> Config {
    let arg = if args.len() > 5 { "1" } else { "x" };
    Config { port: parse_port(arg) }
}

#[inline(never)]
fn poke<T: Copy>(p: *mut T, v: T) {
    unsafe { std::ptr::write_volatile(p, v) } // SEGV: p is NULL
}

#[inline(never)]
fn each<F: Fn(usize)>(n: usize, f: F) {
    for i in 0..n {
        f(i)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() > 1 && args[1] == "segv" {
        each(3, |i| poke(std::ptr::null_mut::<u8>(), i as u8));
    }
    println!("{}", load(&args).port);
}
