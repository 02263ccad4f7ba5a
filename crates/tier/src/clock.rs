//! CLOCK eviction over cache slots: a hand sweeps the slots in index order, clearing
//! reference bits and stopping at the first evictable slot whose bit is already clear. A hit
//! only sets a bit (no list to relink under the lock), the usual cheaper approximation of LRU.

/// Reference bits and the hand.
#[derive(Debug, Clone)]
pub struct Clock {
    referenced: Vec<bool>,
    present: Vec<bool>,
    hand: usize,
}

impl Clock {
    /// An empty clock over `slots` slots.
    pub fn new(slots: u32) -> Clock {
        Clock {
            referenced: vec![false; slots as usize],
            present: vec![false; slots as usize],
            hand: 0,
        }
    }

    /// Marks `slot` used (inserting it if absent).
    pub fn touch(&mut self, slot: u32) {
        self.present[slot as usize] = true;
        self.referenced[slot as usize] = true;
    }

    /// Removes `slot`.
    pub fn remove(&mut self, slot: u32) {
        self.present[slot as usize] = false;
        self.referenced[slot as usize] = false;
    }

    /// Whether `slot` is in the clock.
    pub fn contains(&self, slot: u32) -> bool {
        self.present[slot as usize]
    }

    /// Sweeps from the hand: clears the bits of referenced slots, and returns the first
    /// evictable slot without one; at most two turns, so `None` means nothing is evictable.
    pub fn victim(&mut self, mut evictable: impl FnMut(u32) -> bool) -> Option<u32> {
        let n = self.present.len();
        for _ in 0..2 * n {
            let s = self.hand;
            self.hand = (self.hand + 1) % n.max(1);
            if !self.present[s] || !evictable(s as u32) {
                continue;
            }
            if self.referenced[s] {
                self.referenced[s] = false;
            } else {
                return Some(s as u32);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_chance() {
        let mut clock = Clock::new(4);
        for s in 0..4 {
            clock.touch(s);
        }
        // All referenced: the first sweep clears every bit, the second finds slot 0.
        assert_eq!(clock.victim(|_| true), Some(0));
        clock.remove(0);
        clock.touch(1);
        // Slot 1 was used again: 2 goes first.
        assert_eq!(clock.victim(|_| true), Some(2));
        assert_eq!(clock.victim(|s| s == 3), Some(3));
        assert_eq!(clock.victim(|_| false), None);
    }
}
