//! Which global document ids a segment holds.
//!
//! Indexing threads take batches of documents in turn, so one thread's segment holds several
//! runs of consecutive DIDs. Postings carry global DIDs; norms and stored documents are kept in
//! the segment's local order, and a [`DocMap`] translates between the two.

use serde::{Deserialize, Serialize};

/// Runs of consecutive global DIDs, in increasing order: `[first DID, count]` each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocMap {
    runs: Vec<[u32; 2]>,
    /// Local index of each run's first document.
    #[serde(skip)]
    starts: Vec<u32>,
}

impl DocMap {
    /// A map from runs (as stored in the manifest).
    pub fn from_runs(runs: Vec<[u32; 2]>) -> DocMap {
        let mut starts = Vec::with_capacity(runs.len());
        let mut local = 0u32;
        for run in &runs {
            starts.push(local);
            local = local.saturating_add(run[1]);
        }
        DocMap { runs, starts }
    }

    /// Appends global DID `doc`, which must exceed every DID already present.
    pub fn push(&mut self, doc: u32) {
        match self.runs.last_mut() {
            Some(run) if run[0] + run[1] == doc => run[1] += 1,
            _ => {
                self.starts.push(self.len());
                self.runs.push([doc, 1]);
            }
        }
    }

    /// Appends the run of `count` DIDs from `first`, which must exceed every DID already
    /// present; joins it to the last run when they touch.
    pub fn push_run(&mut self, first: u32, count: u32) {
        match self.runs.last_mut() {
            Some(run) if run[0] + run[1] == first => run[1] += count,
            _ => {
                self.starts.push(self.len());
                self.runs.push([first, count]);
            }
        }
    }

    /// The runs.
    pub fn runs(&self) -> &[[u32; 2]] {
        &self.runs
    }

    /// Number of documents.
    pub fn len(&self) -> u32 {
        self.runs.iter().map(|r| r[1]).sum()
    }

    /// True when the map holds no document.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The local index of global DID `doc`, if the segment holds it.
    pub fn local(&self, doc: u32) -> Option<u32> {
        let i = self.runs.partition_point(|r| r[0] <= doc).checked_sub(1)?;
        let [first, count] = self.runs[i];
        (doc - first < count).then(|| self.starts[i] + (doc - first))
    }

    /// True when local index `local` starts a run.
    pub fn is_run_start(&self, local: u32) -> bool {
        self.starts.binary_search(&local).is_ok()
    }

    /// Local index ranges of the runs, in order.
    pub fn local_runs(&self) -> impl Iterator<Item = std::ops::Range<u32>> + '_ {
        self.starts
            .iter()
            .zip(&self.runs)
            .map(|(&start, run)| start..start + run[1])
    }

    /// Global DIDs in local order.
    pub fn docs(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs
            .iter()
            .flat_map(|&[first, count]| first..first + count)
    }

    /// Rebuilds the local starts after deserialising.
    pub fn rebuilt(self) -> DocMap {
        DocMap::from_runs(self.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_global_to_local() {
        let mut map = DocMap::default();
        for d in [0, 1, 2, 10, 11, 20] {
            map.push(d);
        }
        assert_eq!(map.runs(), &[[0, 3], [10, 2], [20, 1]]);
        assert_eq!(map.local(11), Some(4));
        assert_eq!(map.local(20), Some(5));
        assert_eq!(map.local(3), None);
        assert_eq!(map.docs().collect::<Vec<_>>(), vec![0, 1, 2, 10, 11, 20]);
        assert_eq!(DocMap::from_runs(map.runs().to_vec()).local(10), Some(3));
    }
}
