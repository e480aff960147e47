// names.rs: Rust code whose symbols have every shape of name the
// demangler must read: closures (nested, in generic functions), trait
// impls and inherent impls, generic functions with type, const, lifetime
// and dyn-trait arguments, function pointers, arrays, tuples, slices,
// references, raw pointers, a non-ASCII identifier (Punycode in v0), and
// the standard library's own symbols. The tests build it with Debian's
// rustc in both manglings and compare every symbol with c++filt and gdb.
use std::collections::HashMap;
use std::fmt::Debug;

pub trait Shape {
    fn area(&self) -> f64;
}

pub struct Square<const N: usize> {
    side: [f64; N],
}

impl<const N: usize> Shape for Square<N> {
    #[inline(never)]
    fn area(&self) -> f64 {
        self.side.iter().map(|s| s * s).sum()
    }
}

pub struct Histogram<'a, T> {
    bins: Vec<u64>,
    label: &'a str,
    extra: Option<T>,
}

impl<'a, T: Debug> Histogram<'a, T> {
    #[inline(never)]
    pub fn add(&mut self, i: usize) {
        self.bins[i] += 1;
    }

    #[inline(never)]
    pub fn describe(&self) -> String {
        format!("{} {:?}", self.label, self.extra)
    }
}

#[inline(never)]
fn apply<F: Fn(i64) -> i64>(f: F, x: i64) -> i64 {
    let g = |y: i64| f(y) + 1;
    g(x)
}

#[inline(never)]
fn by_pointer(f: fn(&str, &mut [u8]) -> (bool, char), raw: *const u16, m: *mut i128) -> usize {
    let mut buf = [0u8; 4];
    let r = f("x", &mut buf);
    (r.0 as usize) + (raw as usize) + (m as usize)
}

fn first(s: &str, b: &mut [u8]) -> (bool, char) {
    b[0] = 1;
    (s.is_empty(), 'é')
}

#[inline(never)]
fn total(shapes: &[Box<dyn Shape + Send>]) -> f64 {
    shapes.iter().map(|s| s.area()).sum()
}

#[inline(never)]
fn längste<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.len() > b.len() { a } else { b }
}

#[inline(never)]
fn with_flag<const B: bool, const C: char, const I: i32>() -> i32 {
    if B { I } else { C as i32 }
}

fn main() {
    let mut h: Histogram<'_, u8> = Histogram { bins: vec![0; 4], label: "h", extra: None };
    h.add(1);
    let shapes: Vec<Box<dyn Shape + Send>> = vec![Box::new(Square::<2> { side: [1.0, 2.0] })];
    let mut counts: HashMap<String, usize> = HashMap::new();
    counts.insert(h.describe(), apply(|x| x * 2, 3) as usize);
    let mut big = 0i128;
    let n = by_pointer(first, std::ptr::null(), &mut big) + with_flag::<true, 'x', -7>() as usize;
    println!("{} {} {:?} {}", total(&shapes), längste("a", "bb"), counts, n);
}
