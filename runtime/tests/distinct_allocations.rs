//! A DISTINCT view over strings probes with the batch's borrowed bytes: a
//! value already in its group's view allocates nothing, so folding a batch
//! of repeated values costs the same few per-batch allocations whatever the
//! number of rows. Counted with a counting global allocator, per thread:
//! only the test thread's own allocations count (the harness's threads may
//! allocate meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use aggforge_runtime::accumulator::BatchUpdate;
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, Phase, SqlType};
use arrow_array::{ArrayRef, StringArray};

struct Counting;

thread_local! {
    /// Allocations made by this thread (const-initialized: reading it
    /// allocates nothing).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Counts one allocation of the calling thread (none during its teardown).
fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// Allocations the calling thread made so far.
fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds GlobalAlloc's contract; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's layout is passed through (same contract).
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr` came from `System` with `layout` (same contract).
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn strings(rows: usize) -> ArrayRef {
    // 16 values of 24 bytes (longer than any inline small-string form).
    Arc::new(StringArray::from_iter_values(
        (0..rows).map(|i| format!("distinct-value-{:010}", i % 16)),
    ))
}

#[test]
fn a_duplicate_string_probe_allocates_nothing() {
    let ty = SqlType::of("STRING");
    for function in ["COUNT", "MAX"] {
        let admission = registry::lookup(
            function,
            Some(&ty),
            Phase::Single,
            InputMode::InsertOnly,
            true,
        )
        .unwrap();
        let mut acc = admission.create(Some(&ty)).unwrap();
        acc.resize(4);
        let fold = |acc: &mut Box<dyn aggforge_runtime::accumulator::GroupAccumulator>,
                    values: &ArrayRef,
                    groups: &[u32]| {
            let args = [values.clone()];
            let before = allocations();
            acc.update(&BatchUpdate {
                args: &args,
                group_ids: groups,
                filter: None,
                row_kinds: None,
                distinct: None,
            })
            .unwrap();
            allocations() - before
        };
        // Every group sees all 16 values first.
        let first = strings(64);
        let groups: Vec<u32> = (0..64).map(|i| (i / 16) as u32).collect();
        assert!(
            fold(&mut acc, &first, &groups) >= 4 * 16,
            "{function}: new values own their bytes"
        );
        // Then only values it holds: per-batch allocations, none per row.
        let small = strings(32);
        let small_groups: Vec<u32> = (0..32).map(|i| (i % 4) as u32).collect();
        let large = strings(8192);
        let large_groups: Vec<u32> = (0..8192).map(|i| (i % 4) as u32).collect();
        let per_small = fold(&mut acc, &small, &small_groups);
        let per_large = fold(&mut acc, &large, &large_groups);
        assert_eq!(
            per_small, per_large,
            "{function}: 32 and 8,192 duplicate rows must allocate alike"
        );
        assert!(
            per_large <= 8,
            "{function}: {per_large} allocations for a batch"
        );
    }
}
