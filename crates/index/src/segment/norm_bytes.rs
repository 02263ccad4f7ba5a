//! The norm bytes of a single-run segment's documents by global DID: each document's length
//! as Lucene's one-byte norm ([`crate::search::length_to_norm`]), the index of the scorer's
//! length-normalisation table. The norms file stores them first, before what the exact lengths
//! add to them ([`crate::format::NormsFile`]), so a scoring loop finds a document's
//! normalisation with two small loads (the byte, then the table entry) and no conversion.

/// The norm bytes of the documents `first..first + bytes.len()`.
#[derive(Debug, Clone, Copy)]
pub struct NormBytes<'a> {
    first: u32,
    bytes: &'a [u8],
}

impl<'a> NormBytes<'a> {
    /// The norm bytes `bytes` of documents `first..first + bytes.len()`.
    pub fn new(first: u32, bytes: &'a [u8]) -> NormBytes<'a> {
        NormBytes { first, bytes }
    }

    /// The first DID of the run.
    #[inline]
    pub fn first(&self) -> u32 {
        self.first
    }

    /// The bytes, one per DID of the run from [`NormBytes::first`].
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The norm byte of global DID `doc`; 0 for a DID outside the run (the byte of length 0,
    /// as [`crate::segment::DocLengths::of`] reads such a DID).
    #[inline]
    pub fn of(&self, doc: u32) -> u8 {
        self.bytes
            .get(doc.wrapping_sub(self.first) as usize)
            .copied()
            .unwrap_or(0)
    }
}
