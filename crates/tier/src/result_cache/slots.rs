//! The policies' bookkeeping: entries in numbered slots found by key, and orders over slots
//! (doubly linked lists kept in arrays), so a touch, a move between queues and a removal are
//! O(1). A slot can be in several lists at once (in LIRS an entry is on the stack and in the
//! queue).

use rustc_hash::FxHashMap;

use super::policy::Key;

pub(crate) const NIL: u32 = u32::MAX;

/// Entries of type `T` in slots, each with its key; freed slots are reused.
#[derive(Debug, Clone)]
pub(crate) struct Slots<T> {
    entries: Vec<Option<(Key, T)>>,
    spare: Vec<u32>,
    by_key: FxHashMap<Key, u32>,
}

impl<T> Slots<T> {
    pub(crate) fn new() -> Slots<T> {
        Slots {
            entries: Vec::new(),
            spare: Vec::new(),
            by_key: FxHashMap::default(),
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }

    /// The slot of `key`.
    pub(crate) fn find(&self, key: Key) -> Option<u32> {
        self.by_key.get(&key).copied()
    }

    /// Stores `value` under `key` (which must be absent) and returns its slot.
    pub(crate) fn insert(&mut self, key: Key, value: T) -> u32 {
        let slot = match self.spare.pop() {
            Some(s) => {
                self.entries[s as usize] = Some((key, value));
                s
            }
            None => {
                self.entries.push(Some((key, value)));
                (self.entries.len() - 1) as u32
            }
        };
        let old = self.by_key.insert(key, slot);
        debug_assert!(old.is_none(), "key {key} inserted twice");
        slot
    }

    /// Removes the entry in `slot` (the caller unlinks it from its lists first).
    pub(crate) fn remove(&mut self, slot: u32) -> (Key, T) {
        let (key, value) = self.entries[slot as usize]
            .take()
            .expect("an occupied slot");
        self.by_key.remove(&key);
        self.spare.push(slot);
        (key, value)
    }

    pub(crate) fn key(&self, slot: u32) -> Key {
        self.entries[slot as usize]
            .as_ref()
            .expect("an occupied slot")
            .0
    }

    pub(crate) fn get(&self, slot: u32) -> &T {
        &self.entries[slot as usize]
            .as_ref()
            .expect("an occupied slot")
            .1
    }

    pub(crate) fn get_mut(&mut self, slot: u32) -> &mut T {
        &mut self.entries[slot as usize]
            .as_mut()
            .expect("an occupied slot")
            .1
    }

    /// Every occupied slot with its key and entry (tests).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, Key, &T)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(s, e)| e.as_ref().map(|(k, v)| (s as u32, *k, v)))
    }
}

/// An order over slots, from front to back.
#[derive(Debug, Clone, Default)]
pub(crate) struct List {
    prev: Vec<u32>,
    next: Vec<u32>,
    linked: Vec<bool>,
    front: u32,
    back: u32,
    len: usize,
}

impl List {
    pub(crate) fn new() -> List {
        List {
            front: NIL,
            back: NIL,
            ..List::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn contains(&self, slot: u32) -> bool {
        self.linked.get(slot as usize).copied().unwrap_or(false)
    }

    pub(crate) fn front(&self) -> Option<u32> {
        (self.front != NIL).then_some(self.front)
    }

    pub(crate) fn back(&self) -> Option<u32> {
        (self.back != NIL).then_some(self.back)
    }

    /// The slot after `slot` (towards the back).
    #[cfg(test)]
    pub(crate) fn next(&self, slot: u32) -> Option<u32> {
        let n = self.next[slot as usize];
        (n != NIL).then_some(n)
    }

    fn grow(&mut self, slot: u32) {
        if slot as usize >= self.linked.len() {
            let len = slot as usize + 1;
            self.prev.resize(len, NIL);
            self.next.resize(len, NIL);
            self.linked.resize(len, false);
        }
    }

    /// Puts `slot` at the front (moving it there if it is in the list).
    pub(crate) fn push_front(&mut self, slot: u32) {
        self.remove(slot);
        self.grow(slot);
        let s = slot as usize;
        self.prev[s] = NIL;
        self.next[s] = self.front;
        if self.front != NIL {
            self.prev[self.front as usize] = slot;
        } else {
            self.back = slot;
        }
        self.front = slot;
        self.linked[s] = true;
        self.len += 1;
    }

    /// Puts `slot` at the back (moving it there if it is in the list).
    pub(crate) fn push_back(&mut self, slot: u32) {
        self.remove(slot);
        self.grow(slot);
        let s = slot as usize;
        self.next[s] = NIL;
        self.prev[s] = self.back;
        if self.back != NIL {
            self.next[self.back as usize] = slot;
        } else {
            self.front = slot;
        }
        self.back = slot;
        self.linked[s] = true;
        self.len += 1;
    }

    /// Takes `slot` out of the list; false if it was not in it.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        if !self.contains(slot) {
            return false;
        }
        let s = slot as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.front = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.back = p;
        }
        self.linked[s] = false;
        self.len -= 1;
        true
    }

    /// Takes the back slot out of the list.
    pub(crate) fn pop_back(&mut self) -> Option<u32> {
        let b = self.back()?;
        self.remove(b);
        Some(b)
    }

    /// Takes the front slot out of the list.
    pub(crate) fn pop_front(&mut self) -> Option<u32> {
        let f = self.front()?;
        self.remove(f);
        Some(f)
    }

    /// The slots from front to back (tests).
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len);
        let mut s = self.front();
        while let Some(slot) = s {
            out.push(slot);
            s = self.next(slot);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_moves_and_removals() {
        let mut l = List::new();
        l.push_front(3);
        l.push_front(1);
        l.push_back(7);
        assert_eq!(l.to_vec(), vec![1, 3, 7]);
        l.push_back(1);
        assert_eq!(l.to_vec(), vec![3, 7, 1]);
        assert!(l.remove(7));
        assert!(!l.remove(7));
        assert_eq!(l.pop_back(), Some(1));
        assert_eq!(l.pop_front(), Some(3));
        assert!(l.is_empty());
        assert_eq!(l.back(), None);
    }

    #[test]
    fn slots_reuse() {
        let mut s: Slots<u8> = Slots::new();
        let a = s.insert(10, 1);
        let b = s.insert(20, 2);
        assert_eq!(s.remove(a), (10, 1));
        assert_eq!(s.insert(30, 3), a);
        assert_eq!(s.find(20), Some(b));
        assert_eq!(s.find(10), None);
        assert_eq!(s.len(), 2);
    }
}
