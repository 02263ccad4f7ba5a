//! The serving configuration's name and parameter.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How queries reach their postings (see the [module docs](super)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ServingMode {
    /// mmap and the page cache only.
    Base,
    /// mmap, with a worker warming the page cache a fixed number of queries ahead.
    BasePrefetch {
        /// Queries the worker may run ahead of the query threads.
        lookahead: usize,
    },
    /// The tier cache, filled on demand; misses read storage.
    Hybrid,
    /// The tier cache, filled ahead of the queries with an adaptive lookahead.
    HybridPrefetch,
}

impl ServingMode {
    /// Whether the mode needs a postings cache.
    pub fn uses_cache(self) -> bool {
        matches!(self, ServingMode::Hybrid | ServingMode::HybridPrefetch)
    }

    /// The mode's name, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            ServingMode::Base => "base",
            ServingMode::BasePrefetch { .. } => "base-prefetch",
            ServingMode::Hybrid => "hybrid",
            ServingMode::HybridPrefetch => "hybrid-prefetch",
        }
    }
}

impl fmt::Display for ServingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServingMode::BasePrefetch { lookahead } => {
                write!(f, "base-prefetch(lookahead {lookahead})")
            }
            other => f.write_str(other.name()),
        }
    }
}

impl FromStr for ServingMode {
    type Err = String;

    /// `base`, `base-prefetch` (lookahead 16, the original study's best), `hybrid`,
    /// `hybrid-prefetch`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "base" => Ok(ServingMode::Base),
            "base-prefetch" => Ok(ServingMode::BasePrefetch { lookahead: 16 }),
            "hybrid" => Ok(ServingMode::Hybrid),
            "hybrid-prefetch" => Ok(ServingMode::HybridPrefetch),
            other => Err(format!(
                "unknown mode {other:?} (base, base-prefetch, hybrid, hybrid-prefetch)"
            )),
        }
    }
}
