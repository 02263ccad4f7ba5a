//! Files mapped for reading, whose read errors fail a request rather than the process.
//!
//! apcache reads most of an index through `mmap` (postings in the `base` and `hybrid` modes,
//! term metadata, norms, stored documents, positions). A page that cannot be read (the file
//! truncated under the mapping, an I/O error of the device) reaches the reading thread as
//! `SIGBUS`, which would end the server. [`MappedFile`] registers each mapping in a lock-free
//! table (`registry.rs`) that a process-wide `SIGBUS` handler (`sigbus.rs`) searches: a fault
//! in a registered mapping reads zeros and marks the mapping, and the reader turns the mark
//! into [`crate::IndexError::MappedReadFailed`] before it answers.

mod mapped_file;
mod registry;
mod sigbus;

pub use mapped_file::MappedFile;
