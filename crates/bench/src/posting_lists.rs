//! Real posting lists built in memory from a slice of a corpus, for benchmarks that need no
//! index (the codec benchmark).

use std::collections::HashMap;

use apcache_codec::BLOCK_LEN;
use apcache_index::analyzer::Analyzer;

/// One term's postings: increasing document ids and their frequencies.
#[derive(Debug, Clone, Default)]
pub struct PostingList {
    /// Document ids, strictly increasing.
    pub docs: Vec<u32>,
    /// Term frequency in each document (at least 1).
    pub freqs: Vec<u32>,
}

/// The posting lists of every term of a set of documents.
#[derive(Debug, Default)]
pub struct PostingLists {
    /// The lists, in no particular order.
    pub lists: Vec<PostingList>,
    /// Documents read.
    pub documents: usize,
    /// Tokens read.
    pub tokens: u64,
}

impl PostingLists {
    /// Tokenises each text with `analyzer` and inverts it; document ids follow the order of
    /// `texts`.
    pub fn build<'a>(analyzer: &Analyzer, texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut terms: HashMap<String, PostingList> = HashMap::new();
        let mut in_doc: HashMap<String, u32> = HashMap::new();
        let mut documents = 0u32;
        let mut tokens = 0u64;
        for text in texts {
            in_doc.clear();
            analyzer.for_each_token(text, |token| {
                tokens += 1;
                match in_doc.get_mut(token) {
                    Some(count) => *count += 1,
                    None => {
                        in_doc.insert(token.to_string(), 1);
                    }
                }
            });
            for (term, freq) in in_doc.drain() {
                let list = terms.entry(term).or_default();
                list.docs.push(documents);
                list.freqs.push(freq);
            }
            documents += 1;
        }
        PostingLists {
            lists: terms.into_values().collect(),
            documents: documents as usize,
            tokens,
        }
    }

    /// Total postings.
    pub fn postings(&self) -> usize {
        self.lists.iter().map(|l| l.docs.len()).sum()
    }

    /// Every block of every list, split at [`BLOCK_LEN`], as the index would store them.
    pub fn blocks(&self) -> Blocks {
        let mut blocks = Blocks::default();
        for list in &self.lists {
            for (docs, freqs) in list
                .docs
                .chunks(BLOCK_LEN)
                .zip(list.freqs.chunks(BLOCK_LEN))
            {
                let set = if docs.len() == BLOCK_LEN {
                    &mut blocks.full
                } else {
                    &mut blocks.tail
                };
                set.push(docs, freqs);
            }
        }
        blocks
    }
}

/// Blocks of postings stored back to back.
#[derive(Debug, Default, Clone)]
pub struct BlockSet {
    /// Document ids of all blocks, concatenated.
    pub docs: Vec<u32>,
    /// Stored frequencies (frequency minus one, as the index stores them), concatenated.
    pub freqs: Vec<u32>,
    /// Start of each block in `docs` and `freqs`, plus the end.
    pub bounds: Vec<usize>,
}

impl BlockSet {
    fn push(&mut self, docs: &[u32], freqs: &[u32]) {
        if self.bounds.is_empty() {
            self.bounds.push(0);
        }
        self.docs.extend_from_slice(docs);
        self.freqs.extend(freqs.iter().map(|f| f - 1));
        self.bounds.push(self.docs.len());
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// True when there is no block.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The documents and stored frequencies of block `i`.
    pub fn block(&self, i: usize) -> (&[u32], &[u32]) {
        let range = self.bounds[i]..self.bounds[i + 1];
        (&self.docs[range.clone()], &self.freqs[range])
    }
}

/// A corpus's blocks, split into full blocks and the shorter last blocks of lists.
#[derive(Debug, Default, Clone)]
pub struct Blocks {
    /// Blocks of exactly [`BLOCK_LEN`] postings.
    pub full: BlockSet,
    /// The last, shorter block of each list that has one.
    pub tail: BlockSet,
}
