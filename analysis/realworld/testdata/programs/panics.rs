// panics MODE: a Rust program built with -C panic=abort (Debian's rustc),
// panicking the common ways: unwrap on an Err (parse_port), an index out of
// bounds (Histogram::add), expect on None (lookup_user), panic! with
// arguments (check_budget); "volatile" reads address 16 through
// core::ptr::read_volatile, inlined into read_register.
use std::env;

struct Histogram {
    bins: Vec<u64>,
}

impl Histogram {
    #[inline(never)]
    fn add(&mut self, value: usize) {
        self.bins[value / 10] += 1;
    }
}

#[inline(never)]
fn parse_port(s: &str) -> u16 {
    s.parse::<u16>().unwrap()
}

#[inline(never)]
fn lookup_user(id: u32) -> &'static str {
    let users = [(1, "root"), (1000, "alice")];
    users.iter().find(|u| u.0 == id).map(|u| u.1).expect("no such user")
}

#[inline(never)]
fn check_budget(spent: u64, budget: u64) {
    if spent > budget {
        panic!("budget exceeded: spent {} of {}", spent, budget);
    }
}

#[inline(never)]
fn read_register(addr: usize) -> u32 {
    unsafe { core::ptr::read_volatile(addr as *const u32) }
}

fn main() {
    let mode = env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "unwrap" => println!("{}", parse_port("80a")),
        "index" => {
            let mut h = Histogram { bins: vec![0; 4] };
            h.add(75);
        }
        "expect" => println!("{}", lookup_user(7)),
        "panic" => check_budget(120, 100),
        "volatile" => println!("{}", read_register(16)),
        _ => {}
    }
}
