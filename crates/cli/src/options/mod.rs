//! Option groups shared by the `apcache` and `apcache-bench` binaries, flattened into each
//! command that needs them (`#[command(flatten)]`), so a flag is spelt, documented and parsed
//! in one place and becomes a typed value at the edge.

mod documents;
mod query;
mod serving;
pub mod size;

pub use documents::{default_sample, load_documents, read_documents};
pub use query::{open_index, DefaultOp, LoadArg, NormsArg, QueryArgs, ScoringArg};
pub use serving::{EvictionArg, LoaderArg, ModeArg, ServingArgs, QUEUE_PER_THREAD};
