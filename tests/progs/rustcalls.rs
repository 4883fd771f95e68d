// rustcalls.rs - Rust names for demangling tests: nested modules, a
// generic struct's method, a trait impl, a generic function called with a
// closure, recursion (usage: rustcalls [SECONDS]). Built by the test with
// frame pointers, once per symbol mangling scheme (legacy and v0). The
// leaf has no frame of its own, so its caller is missing from the frame-
// pointer chain: every named function reaches it through inner::spin.
use std::time::Instant;

// keeps a value (and the call that made it) from being optimised away;
// std::hint::black_box is younger than Debian 12's rustc 1.63
#[inline(always)]
fn black_box(v: u64) -> u64 {
    unsafe { std::ptr::read_volatile(&v) }
}

mod outer {
    pub mod inner {
        #[inline(never)]
        pub fn leaf_spin(n: u64) -> u64 {
            let mut s = 0u64;
            for i in 0..n {
                s = s.wrapping_add(i ^ (s >> 3));
            }
            crate::black_box(s)
        }

        #[inline(never)]
        pub fn spin(n: u64) -> u64 {
            crate::black_box(leaf_spin(n)) + 1
        }
    }

    pub struct Worker<T> {
        pub n: T,
    }

    impl<T: Into<u64> + Copy> Worker<T> {
        #[inline(never)]
        pub fn run(&self) -> u64 {
            crate::black_box(inner::spin(self.n.into()))
        }
    }

    pub trait Job {
        fn work(&self) -> u64;
    }

    impl Job for Worker<u32> {
        #[inline(never)]
        fn work(&self) -> u64 {
            crate::black_box(self.run())
        }
    }
}

use outer::Job;

#[inline(never)]
fn apply<F: Fn(u64) -> u64>(f: &F, n: u64) -> u64 {
    black_box(f(n))
}

#[inline(never)]
fn recurse(depth: u32, n: u64) -> u64 {
    if depth == 0 {
        black_box(outer::inner::spin(n))
    } else {
        black_box(recurse(depth - 1, n)) + 1
    }
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.3);
    let start = Instant::now();
    let mut sink = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        sink = sink.wrapping_add(outer::Worker { n: 300000u32 }.work());
        sink = sink.wrapping_add(outer::Worker { n: 200000u64 }.run());
        sink = sink.wrapping_add(apply(&|x| outer::inner::spin(x * 2), 100000));
        sink = sink.wrapping_add(recurse(4, 200000));
    }
    std::process::exit((black_box(sink) == 42) as i32);
}
