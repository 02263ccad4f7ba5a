//! What every allocator and every policy must do, checked against simple models: one test
//! runs each registered kind.

use std::collections::HashMap;

use proptest::prelude::*;

use super::{reserved_len, Allocator, AllocatorKind, Key, Policy, PolicyKind, Tlsf, ALIGN};

#[derive(Debug, Clone)]
enum AllocOp {
    Allocate(u32),
    Free(prop::sample::Index),
}

fn alloc_op() -> impl Strategy<Value = AllocOp> {
    prop_oneof![
        3 => prop_oneof![0u32..64, 0u32..700, 0u32..3000].prop_map(AllocOp::Allocate),
        2 => any::<prop::sample::Index>().prop_map(AllocOp::Free),
    ]
}

/// The free blocks, sorted by offset.
fn free_blocks(a: &dyn Allocator) -> Vec<(u64, u64)> {
    let mut blocks = Vec::new();
    a.for_each_free_block(&mut |o, s| blocks.push((u64::from(o), s)));
    blocks.sort_unstable();
    blocks
}

/// The allocator's books against the model's live allocations (offset, reserved bytes).
fn check_books(a: &dyn Allocator, live: &[(u64, u64)]) -> Result<(), TestCaseError> {
    let capacity = a.capacity();
    let live_bytes: u64 = live.iter().map(|l| l.1).sum();
    prop_assert_eq!(a.free_bytes(), capacity - live_bytes);
    prop_assert_eq!(a.live_count(), live.len());
    let blocks = free_blocks(a);
    prop_assert_eq!(blocks.iter().map(|b| b.1).sum::<u64>(), a.free_bytes());
    prop_assert_eq!(
        blocks.iter().map(|b| b.1).max().unwrap_or(0),
        a.largest_free()
    );
    prop_assert_eq!(a.unusable_bytes(), a.free_bytes() - a.largest_free());
    let f = a.fragmentation();
    prop_assert!((0.0..1.0).contains(&f) || (a.free_bytes() == 0 && f == 0.0));
    // Free blocks and live allocations tile the region without overlapping.
    let mut all: Vec<(u64, u64)> = blocks.iter().chain(live).copied().collect();
    all.sort_unstable();
    let mut end = 0;
    for (offset, size) in all {
        prop_assert_eq!(offset, end, "a gap or an overlap at {}", offset);
        prop_assert!(size > 0 && offset % u64::from(ALIGN) == 0);
        end = offset + size;
    }
    prop_assert_eq!(end, capacity);
    Ok(())
}

proptest! {
    /// Random allocations and frees against a list of live allocations: allocations lie in
    /// the region and never overlap, the free bytes add up, a failure is one the allocator's
    /// guarantee allows, and once everything is freed the region is one block again.
    #[test]
    fn allocators_match_the_model(
        region in 0u32..20_000,
        ops in proptest::collection::vec(alloc_op(), 1..250),
        order in any::<u64>(),
    ) {
        for kind in AllocatorKind::ALL {
            let mut a = kind.build(region);
            prop_assert_eq!(a.capacity(), u64::from(region / ALIGN * ALIGN));
            let mut live: Vec<(u64, u64)> = Vec::new();
            for op in &ops {
                match *op {
                    AllocOp::Allocate(len) => {
                        let need = reserved_len(len);
                        let blocks = free_blocks(&*a);
                        match a.allocate(len) {
                            Some(offset) => {
                                let offset = u64::from(offset);
                                prop_assert_eq!(a.reserved_at(offset as u32), Some(need));
                                prop_assert!(offset + need <= a.capacity());
                                prop_assert!(live.iter().all(|&(o, s)| offset + need <= o || o + s <= offset));
                                live.push((offset, need));
                            }
                            None => match kind {
                                AllocatorKind::FirstFit => {
                                    prop_assert!(blocks.iter().all(|b| b.1 < need));
                                }
                                AllocatorKind::Tlsf => {
                                    let rounded = Tlsf::class_round_up(need);
                                    prop_assert!(blocks.iter().all(|b| b.1 < rounded));
                                    let same: Vec<u64> = blocks.iter().map(|b| b.1).filter(|&s| Tlsf::same_class(s, need)).collect();
                                    prop_assert!(same.len() > Tlsf::OWN_CLASS_PROBES || same.iter().all(|&s| s < need));
                                }
                            },
                        }
                    }
                    AllocOp::Free(pick) => {
                        if !live.is_empty() {
                            let (offset, size) = live.swap_remove(pick.index(live.len()));
                            prop_assert_eq!(a.free(offset as u32), size);
                            prop_assert_eq!(a.reserved_at(offset as u32), None);
                        }
                    }
                }
                check_books(&*a, &live)?;
            }
            // Free the rest in a scrambled order.
            let mut state = order | 1;
            while !live.is_empty() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let (offset, _) = live.swap_remove((state % live.len() as u64) as usize);
                a.free(offset as u32);
            }
            check_books(&*a, &live)?;
            prop_assert_eq!(a.largest_free(), a.capacity());
            prop_assert_eq!(a.fragmentation(), 0.0);
            if a.capacity() > 0 {
                prop_assert_eq!(a.allocate(a.capacity() as u32), Some(0));
            }
        }
    }
}

#[derive(Debug, Clone)]
enum PolicyOp {
    /// A lookup: a hit if resident, else an insertion and the evictions it calls for.
    Access(Key, u64),
    Remove(Key),
    /// One extra eviction, as when the heap is too fragmented to place an entry.
    Evict,
}

fn policy_op() -> impl Strategy<Value = PolicyOp> {
    prop_oneof![
        8 => (0u64..48, prop_oneof![1u64..20, 1u64..120]).prop_map(|(k, s)| PolicyOp::Access(k, s)),
        1 => (0u64..48).prop_map(PolicyOp::Remove),
        1 => Just(PolicyOp::Evict),
    ]
}

proptest! {
    /// Random lookups, removals and extra evictions against the set of resident keys: the
    /// policy agrees on what is resident and how many bytes it takes, never holds more than
    /// its capacity once the cache has evicted as told, evicts only resident keys (never one
    /// removed), and has a victim whenever something is resident.
    #[test]
    fn policies_match_the_model(
        capacity in 0u64..400,
        ops in proptest::collection::vec(policy_op(), 1..400),
        seed in any::<u64>(),
    ) {
        for kind in PolicyKind::ALL {
            let mut p = kind.build(capacity, seed);
            let mut model: HashMap<Key, u64> = HashMap::new();
            for op in &ops {
                match *op {
                    PolicyOp::Access(key, size) => {
                        let resident = model.contains_key(&key);
                        if resident {
                            prop_assert!(p.contains(key));
                            p.on_hit(key);
                        } else {
                            prop_assert!(!p.contains(key));
                            let admitted = p.on_insert(key, size);
                            prop_assert_eq!(admitted, size <= capacity, "{} admission", kind.name());
                            if admitted {
                                model.insert(key, size);
                            }
                            while p.over_capacity() {
                                let victim = p.evict();
                                let Some(victim) = victim else {
                                    return Err(TestCaseError::fail(format!("{}: over capacity, no victim", kind.name())));
                                };
                                prop_assert!(model.remove(&victim).is_some(), "{} evicted {} not resident", kind.name(), victim);
                            }
                        }
                    }
                    PolicyOp::Remove(key) => {
                        prop_assert_eq!(p.remove(key), model.remove(&key).is_some());
                    }
                    PolicyOp::Evict => match p.evict() {
                        Some(victim) => prop_assert!(model.remove(&victim).is_some(), "{} evicted {} not resident", kind.name(), victim),
                        None => prop_assert!(model.is_empty(), "{}: no victim", kind.name()),
                    },
                }
                prop_assert!(p.resident_bytes() <= p.capacity());
                prop_assert_eq!(p.resident_bytes(), model.values().sum::<u64>(), "{} bytes", kind.name());
                prop_assert_eq!(p.len(), model.len());
                for &key in model.keys() {
                    prop_assert!(p.contains(key));
                }
            }
        }
    }
}

/// Runs `accesses` through `p` as a cache would; returns the hits on keys in `counted`.
fn run(p: &mut dyn Policy, accesses: &[(Key, u64)], counted: impl Fn(Key) -> bool) -> usize {
    let mut hits = 0;
    for &(key, size) in accesses {
        if p.contains(key) {
            p.on_hit(key);
            hits += usize::from(counted(key));
        } else if p.on_insert(key, size) {
            while p.over_capacity() {
                p.evict();
            }
        }
    }
    hits
}

/// A working set of 50 entries (half the cache) used three times, then a one-time scan of
/// 9,000 entries with the working set read again between them (every tenth access). LRU
/// sees each working entry come back after ~500 others, five times the cache, and loses
/// it (but for the first few, read before the scan pushed them out); S3-FIFO (the working set is in the main queue) and DLIRS (it is LIR) keep it.
#[test]
fn scan_resistance() {
    const WORKING: u64 = 50;
    const SIZE: u64 = 10;
    let working = |k: Key| k < WORKING;
    let mut warm = Vec::new();
    for _ in 0..3 {
        warm.extend((0..WORKING).map(|k| (k, SIZE)));
    }
    let mut scan = Vec::new();
    let mut next_scan = 1_000;
    let mut next_working = 0;
    for i in 0..10_000 {
        if i % 10 == 9 {
            scan.push((next_working % WORKING, SIZE));
            next_working += 1;
        } else {
            scan.push((next_scan, SIZE));
            next_scan += 1;
        }
    }
    let reads = scan.iter().filter(|a| working(a.0)).count();
    for kind in PolicyKind::ALL {
        let mut p = kind.build(WORKING * SIZE * 2, 1);
        run(&mut *p, &warm, working);
        let hits = run(&mut *p, &scan, working);
        let resident = (0..WORKING).filter(|&k| p.contains(k)).count();
        match kind {
            PolicyKind::Lru => {
                // Only the first few, read again before the scan pushed them out.
                assert!(hits <= 10, "lru hits {hits}");
                assert!(resident < 20, "lru keeps {resident}");
            }
            PolicyKind::S3Fifo | PolicyKind::Dlirs => {
                assert_eq!(hits, reads, "{}", kind.name());
                assert_eq!(resident, WORKING as usize, "{}", kind.name());
            }
            PolicyKind::Random => {}
        }
    }
}
