//! Decoding allocates nothing per event once the names are known: both backends' decoders
//! are run twice over the same input under a counting allocator (this thread's
//! allocations only); the second pass of the text parser allocates nothing, and a BPF dump
//! of 256 records costs the decoder as many allocations as one of 16 (its buffers are per
//! dump, not per record). Counts, not timing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use tickscope_explain::bpf_records::{parse_dump, Decoder, DUMP_SIZE, HEADER_SIZE, RECORD_SIZE};
use tickscope_explain::LineParser;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

/// A dump of `n` `sched_switch` records between two named tasks, after `head0` earlier
/// records of the CPU.
fn switch_dump(head0: u64, n: u64) -> Vec<u8> {
    let mut b = vec![0u8; DUMP_SIZE];
    let comm = |s: &str| {
        let mut c = [0u8; 16];
        c[..s.len()].copy_from_slice(s.as_bytes());
        c
    };
    let (a, z) = (comm("stress-ng-cpu"), comm("tickscope-0"));
    for seq in head0..head0 + n {
        let at = HEADER_SIZE + (seq as usize % 256) * RECORD_SIZE;
        let r = &mut b[at..at + RECORD_SIZE];
        r[0..8].copy_from_slice(&(1_000_000 + seq * 1000).to_le_bytes());
        r[8..12].copy_from_slice(&7u32.to_le_bytes());
        r[12..14].copy_from_slice(&10u16.to_le_bytes());
        let (prev, next) = if seq % 2 == 0 { (7u64, 9u64) } else { (9, 7) };
        r[16..24].copy_from_slice(&(prev | next << 32).to_le_bytes());
        r[24..32].copy_from_slice(&(1u64 << 31 | 9 << 32).to_le_bytes());
        let (pc, nc) = if seq % 2 == 0 { (&a, &z) } else { (&z, &a) };
        r[32..48].copy_from_slice(pc);
        r[48..64].copy_from_slice(nc);
    }
    b[0..8].copy_from_slice(&(head0 + n).to_le_bytes());
    b
}

#[test]
fn decoding_allocates_per_window_not_per_event() {
    // Text: the recorded late wake-up (233 lines of trace_pipe).
    let text = include_str!("fixtures/late-wakeup.txt");
    let mut parser = LineParser::new();
    let first = text.lines().filter_map(|l| parser.parse(l)).count();
    assert!(first > 200, "{first} events");
    let again = allocations(|| {
        let n = text.lines().filter_map(|l| parser.parse(l)).count();
        assert_eq!(n, first);
    });
    assert_eq!(again, 0, "the text parser allocated on known names");
    assert!(parser.names().len() < 64, "{} names", parser.names().len());

    // BPF: a warm decoder, then dumps of 16 and of 256 new records.
    let mut dec = Decoder::offline(HashMap::new(), HashMap::new());
    let mut out = Vec::with_capacity(1024);
    let d = parse_dump(&switch_dump(0, 256)).expect("a whole dump");
    dec.decode(&d, &mut out);
    let per_dump = |head0: u64, n: u64, dec: &mut Decoder, out: &mut Vec<_>| {
        let bytes = switch_dump(head0, n);
        out.clear();
        allocations(|| {
            let d = parse_dump(&bytes).expect("a whole dump");
            assert_eq!(dec.decode(&d, out), n as usize);
        })
    };
    let small = per_dump(256, 16, &mut dec, &mut out);
    let large = per_dump(272, 256, &mut dec, &mut out);
    assert_eq!(small, large, "allocations grew with the records of a dump");
    // The dump's record list and `fill_in`'s per-CPU state.
    assert!(large <= 4, "{large} allocations for one dump");
}
