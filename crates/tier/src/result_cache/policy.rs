//! The replacement policy interface, and the policies by name.

use super::{Dlirs, Lru, Random, S3Fifo};

/// The key of a cache entry as policies see it: a 64-bit hash of the full key.
pub type Key = u64;

/// Decides which entries a cache of [`capacity`](Policy::capacity) bytes keeps.
///
/// A policy tracks the keys it considers resident and their sizes; it never holds data. The
/// cache drives it thus:
///
/// - On a lookup of a resident key ([`contains`](Policy::contains)), a hit: call
///   [`on_hit`](Policy::on_hit).
/// - On a miss, once the result is computed: ask [`on_insert`](Policy::on_insert). If it says
///   no, the entry is not stored. If yes, the key is now resident in the policy's books, which
///   may now exceed the capacity: while [`over_capacity`](Policy::over_capacity), take a
///   victim from [`evict`](Policy::evict) and drop its entry. Then allocate room in the heap;
///   while the allocation fails (fragmentation), evict once more and drop that entry too.
///   [`evict`](Policy::evict) may name the key just inserted (a policy that does not want to
///   keep it): then the entry is not stored, and the eviction loop stops.
/// - When the cache drops an entry for its own reasons (invalidation), call
///   [`remove`](Policy::remove).
///
/// [`evict`](Policy::evict) returns only resident keys, and a key it returns is no longer
/// resident. Sizes are in bytes and include whatever overhead the cache counts.
pub trait Policy {
    /// The policy's name, as [`PolicyKind::name`] gives it.
    fn name(&self) -> &'static str;

    /// The most bytes the resident entries may take once the cache has evicted as told.
    fn capacity(&self) -> u64;

    /// Bytes of the resident entries.
    fn resident_bytes(&self) -> u64;

    /// Number of resident entries.
    fn len(&self) -> usize;

    /// Whether no entry is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is resident.
    fn contains(&self, key: Key) -> bool;

    /// A lookup found `key` resident. A key not resident is ignored.
    fn on_hit(&mut self, key: Key);

    /// A missed entry of `size` bytes could be stored under `key`: returns whether to admit
    /// it. An admitted key is resident from then on (evictions follow, see the trait docs).
    /// An entry larger than the capacity is never admitted. The cache calls this only for
    /// keys not resident; a resident key is replaced (removed, then inserted anew).
    #[must_use]
    fn on_insert(&mut self, key: Key, size: u64) -> bool;

    /// Chooses a victim among the resident keys, makes it non-resident and returns it;
    /// `None` when nothing is resident.
    fn evict(&mut self) -> Option<Key>;

    /// Forgets `key`, resident or only remembered in the policy's history; returns whether it
    /// was resident.
    fn remove(&mut self, key: Key) -> bool;

    /// Whether the resident entries take more than the capacity (the cache must evict).
    fn over_capacity(&self) -> bool {
        self.resident_bytes() > self.capacity()
    }
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn capacity(&self) -> u64 {
        (**self).capacity()
    }
    fn resident_bytes(&self) -> u64 {
        (**self).resident_bytes()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
    fn contains(&self, key: Key) -> bool {
        (**self).contains(key)
    }
    fn on_hit(&mut self, key: Key) {
        (**self).on_hit(key)
    }
    fn on_insert(&mut self, key: Key, size: u64) -> bool {
        (**self).on_insert(key, size)
    }
    fn evict(&mut self) -> Option<Key> {
        (**self).evict()
    }
    fn remove(&mut self, key: Key) -> bool {
        (**self).remove(key)
    }
    fn over_capacity(&self) -> bool {
        (**self).over_capacity()
    }
}

/// The replacement policies, selectable by name for the experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// [`Random`]: the baseline.
    Random,
    /// [`Lru`]: least recently used.
    Lru,
    /// [`S3Fifo`]: three static FIFO queues.
    S3Fifo,
    /// [`Dlirs`]: LIRS with a dynamic split between LIR and resident HIR entries.
    Dlirs,
}

impl PolicyKind {
    /// Every kind, in a fixed order.
    pub const ALL: [PolicyKind; 4] = [
        PolicyKind::Random,
        PolicyKind::Lru,
        PolicyKind::S3Fifo,
        PolicyKind::Dlirs,
    ];

    /// The kind's name: `random`, `lru`, `s3fifo` or `dlirs`.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Random => "random",
            PolicyKind::Lru => "lru",
            PolicyKind::S3Fifo => "s3fifo",
            PolicyKind::Dlirs => "dlirs",
        }
    }

    /// The kind named `name` (as [`name`](PolicyKind::name) gives it), `None` if no kind has
    /// that name.
    pub fn from_name(name: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A policy of this kind for `capacity` bytes; `seed` seeds [`Random`]'s draws (the
    /// others ignore it).
    pub fn build(self, capacity: u64, seed: u64) -> Box<dyn Policy + Send> {
        match self {
            PolicyKind::Random => Box::new(Random::new(capacity, seed)),
            PolicyKind::Lru => Box::new(Lru::new(capacity)),
            PolicyKind::S3Fifo => Box::new(S3Fifo::new(capacity)),
            PolicyKind::Dlirs => Box::new(Dlirs::new(capacity)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        for kind in PolicyKind::ALL {
            assert_eq!(PolicyKind::from_name(kind.name()), Some(kind));
            assert_eq!(kind.build(100, 1).name(), kind.name());
        }
        assert_eq!(PolicyKind::from_name("arc"), None);
    }
}
