//! [`Catalog`]: the indexes a server answers for, by name, each with its live service.

use std::collections::BTreeMap;
use std::sync::Arc;

use apcache_index::analyzer::Analyzer;
use apcache_index::format::FileKind;
use apcache_index::schema::Mapping;
use apcache_index::segment::StoredDocument;
use apcache_index::IndexError;
use apcache_tier::serving::LiveService;

/// Sorted searches of one index that may run at once; more wait for a slot (within their
/// deadline).
const SORTED_SLOTS: usize = 4;

/// One served index.
pub struct ServedIndex {
    /// Its name in URLs.
    pub name: String,
    /// The live service over its serving stack.
    pub service: LiveService,
    /// The analyzer it was built with (queries are analyzed the same way).
    pub analyzer: Analyzer,
    /// Documents, every one (with text or without).
    pub docs: u64,
    /// Bytes of the files queries read (postings, skip data, dictionary, term infos, norms).
    pub search_bytes: u64,
    /// Bytes of the document store.
    pub store_bytes: u64,
    /// Sorted searches running or waiting on this index: they run off the query threads
    /// (every match is visited, no pruning), so they are bounded here instead.
    pub(crate) sorted_slots: Arc<tokio::sync::Semaphore>,
}

impl ServedIndex {
    /// Wraps a started service.
    pub fn new(name: String, service: LiveService) -> Result<ServedIndex, IndexError> {
        let reader = service.reader();
        let analyzer = reader.analyzer();
        let docs = reader.max_doc();
        let manifest = apcache_index::Manifest::load(&service.stack().dir)?;
        let search_bytes = manifest.search_bytes();
        let store_bytes = manifest.file_bytes(FileKind::Store);
        Ok(ServedIndex {
            name,
            service,
            analyzer,
            docs,
            search_bytes,
            store_bytes,
            sorted_slots: Arc::new(tokio::sync::Semaphore::new(SORTED_SLOTS)),
        })
    }

    /// The stored fields of document `doc`, or `None` when it does not exist. A damaged
    /// store block is counted with the service's failures on damaged bytes.
    pub fn document(&self, doc: u32) -> Result<Option<StoredDocument>, IndexError> {
        let stored = match self.service.reader().locate(doc) {
            Some((segment, local)) => segment.stored(local).map(Some),
            None => Ok(None),
        };
        if stored.as_ref().is_err_and(IndexError::is_damage) {
            self.service.note_damage();
        }
        stored
    }

    /// The stored fields of the document whose `_id` is `id` (its number in input order for an
    /// index whose documents have no ids of their own), or `None` when there is none.
    pub fn document_by_id(&self, id: &str) -> Result<Option<StoredDocument>, crate::ApiError> {
        let found = self.service.reader().doc_by_id(id);
        if found.as_ref().is_err_and(IndexError::is_damage) {
            self.service.note_damage();
        }
        match found? {
            Some(doc) => self.document(doc).map_err(crate::ApiError::from),
            None => Ok(None),
        }
    }

    /// The fields of the index's documents.
    pub fn mapping(&self) -> &Mapping {
        self.service.reader().mapping()
    }

    /// The serving mode's name.
    pub fn mode(&self) -> &'static str {
        self.service.stack().config.mode.name()
    }
}

/// The served indexes by name.
#[derive(Default)]
pub struct Catalog {
    indexes: BTreeMap<String, Arc<ServedIndex>>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Adds `index` under its name; `false` when the name is taken.
    pub fn insert(&mut self, index: ServedIndex) -> bool {
        if self.indexes.contains_key(&index.name) {
            return false;
        }
        self.indexes.insert(index.name.clone(), Arc::new(index));
        true
    }

    /// The index named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<ServedIndex>> {
        self.indexes.get(name)
    }

    /// Every index, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ServedIndex>> {
        self.indexes.values()
    }

    /// Stops every index's query threads after what is queued.
    pub fn shutdown(&self) {
        for index in self.indexes.values() {
            index.service.shutdown();
        }
    }
}
