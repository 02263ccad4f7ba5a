//! An APCache instance assembled from one typed [`ServingConfig`]: the tier region, the
//! storage loaders, the postings cache, the DRAM budget and the index reader, in the order the
//! DRAM accounting needs. `apcache serve`, `apcache search` and the benchmarks all build their
//! serving path here, so a flag means the same thing everywhere.
//!
//! Order of set-up:
//! 1. the tier region is created and populated (its pages are charged to the cgroup the
//!    process starts in, outside the budget, as a tier on a real second memory would be);
//! 2. the process joins a fresh memory cgroup with the limit;
//! 3. the metadata copies are placed (before the budget, or inside it when asked);
//! 4. the index's files leave the page cache and the reader is opened again, so every index
//!    page read from then on is charged to the budget.

use std::cmp::Reverse;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apcache_index::search::{IndexReader, LoadMode, TermEntry};
use apcache_index::segment::{SegmentReader, UncachedReads};
use apcache_index::IndexError;

use crate::cgroup::{format_bytes, MemoryCgroup};
use crate::loader::{open_loader, Emulation, LoaderKind, LoaderOptions};
use crate::page_cache;
use crate::region::{TierRegion, TierSpec};
use crate::result_cache::{ResultCache, ResultCacheConfig};
use crate::serving::postings_paths;
use crate::term_layout::TermLayout;
use crate::{CacheError, CacheOptions, PostingsCache, ServingMode};

/// Everything that decides how an index is served, parsed once at the edge.
#[derive(Debug, Clone)]
pub struct ServingConfig {
    /// How queries reach their postings.
    pub mode: ServingMode,
    /// Bytes of the postings cache in the tier (cache modes).
    pub cache_bytes: Option<u64>,
    /// Where the tier lives.
    pub tier: TierSpec,
    /// A tier file populated by another process beforehand (used instead of `tier`).
    pub tier_file: Option<PathBuf>,
    /// The cache's segment size, eviction policy and queued-query guard.
    pub cache: CacheOptions,
    /// How the worker reads postings from storage.
    pub loader: LoaderKind,
    /// The loader's buffers and an optional emulated slow device.
    pub loader_options: LoaderOptions,
    /// The DRAM budget (a memory cgroup the process joins).
    pub memory_limit: Option<u64>,
    /// Where the term metadata and norms are read from: `None` from storage (through the
    /// page cache, inside the budget), else copies placed in this directory (a tier mount).
    pub metadata_dir: Option<PathBuf>,
    /// Copy the metadata into `metadata_dir` after joining the budget's cgroup, so that its
    /// (tmpfs) pages are charged to the budget: the metadata held in DRAM.
    pub metadata_in_budget: bool,
    /// Drop the index's files from the page cache once the budget applies (a cold start; on
    /// by default whenever a memory limit is set, so the budget sees every index page).
    pub cold_start: bool,
    /// A cache of query results in front of evaluation, if any.
    pub result_cache: Option<ResultCacheConfig>,
    /// Place the result cache's heap in the tier (a region of its own, made like the
    /// postings cache's from `tier`, populated before the DRAM limit applies) instead of DRAM.
    pub result_cache_in_tier: bool,
    /// Serve an index an interrupted build left, which holds only part of its input (refused
    /// otherwise: its answers would look whole).
    pub allow_partial: bool,
}

impl Default for ServingConfig {
    fn default() -> Self {
        ServingConfig {
            mode: ServingMode::Base,
            cache_bytes: None,
            tier: TierSpec::Directory(PathBuf::from("/dev/shm")),
            tier_file: None,
            cache: CacheOptions::default(),
            loader: LoaderKind::Direct,
            loader_options: LoaderOptions::default(),
            memory_limit: None,
            metadata_dir: None,
            metadata_in_budget: false,
            cold_start: false,
            result_cache: None,
            result_cache_in_tier: false,
            allow_partial: false,
        }
    }
}

/// Why a serving stack could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The cache or its loaders could not be set up.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The tier region could not be made.
    #[error(transparent)]
    Tier(#[from] crate::error::TierError),
    /// A file operation (metadata copies, the page cache) failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The configuration cannot work.
    #[error("{0}")]
    Config(String),
}

impl StackError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> StackError {
        let what = what.into();
        move |source| StackError::Io { what, source }
    }
}

/// Copies of an index's metadata files in a tier directory, removed when dropped.
struct PlacedMetadata {
    dir: PathBuf,
}

impl PlacedMetadata {
    /// The metadata files of the index at `index`: where each is, and its name.
    fn sources(index: &Path) -> Result<Vec<(PathBuf, String)>, StackError> {
        let manifest = apcache_index::Manifest::load(index)?;
        let mut files = Vec::new();
        for segment in &manifest.segments {
            for kind in apcache_index::segment::METADATA_FILES {
                if let Some(file) = segment.file(kind) {
                    files.push((segment.directory(index).join(&file.name), file.name.clone()));
                }
            }
        }
        Ok(files)
    }

    /// The size of the metadata files of the index at `index`.
    fn bytes(index: &Path) -> Result<u64, StackError> {
        let mut bytes = 0;
        for (path, _) in PlacedMetadata::sources(index)? {
            bytes += std::fs::metadata(&path)
                .map_err(StackError::io(format!("reading {}", path.display())))?
                .len();
        }
        Ok(bytes)
    }

    fn copy(index: &Path, tier_dir: &Path) -> Result<PlacedMetadata, StackError> {
        let dir = tier_dir.join(format!("apcache-metadata-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(StackError::io(format!("creating {}", dir.display())))?;
        let placed = PlacedMetadata { dir };
        for (from, name) in PlacedMetadata::sources(index)? {
            std::fs::copy(&from, placed.dir.join(name))
                .map_err(StackError::io(format!("copying {}", from.display())))?;
        }
        Ok(placed)
    }
}

impl Drop for PlacedMetadata {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An assembled APCache instance over one index.
pub struct ServingStack {
    /// The configuration it was built from.
    pub config: ServingConfig,
    /// The index directory.
    pub dir: PathBuf,
    /// The index, opened after the budget applied.
    pub reader: IndexReader,
    /// The postings cache (cache modes).
    pub cache: Option<PostingsCache>,
    /// The result cache, when configured.
    pub result_cache: Option<ResultCache>,
    /// The DRAM budget's cgroup, when one was asked for and could be joined.
    pub cgroup: Option<MemoryCgroup>,
    /// What the tier is, for reports.
    pub tier_description: Option<String>,
    /// Where the metadata is read from, for reports.
    pub metadata_description: String,
    /// What the DRAM budget is, for reports.
    pub dram_description: String,
    /// What the user should know: an unenforced limit, an emulated device.
    pub warnings: Vec<String>,
    placed: Option<PlacedMetadata>,
}

impl std::fmt::Debug for ServingStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingStack")
            .field("dir", &self.dir)
            .field("mode", &self.config.mode)
            .field("tier", &self.tier_description)
            .finish_non_exhaustive()
    }
}

/// The postings cache bytes for `fraction` of the index: that fraction of its postings bytes,
/// and from 1.0 (100%) on, at least the whole index after segment rounding
/// ([`whole_index_cache_bytes`]), so that a 100% cache, warmed, misses nothing.
///
/// The fractions below 1.0 are of the postings bytes rather than of the rounded whole: a term
/// owns whole segments, so on an index of a million mostly tiny terms the rounded whole is
/// many times the postings (32 KiB segments: about 39 GiB for the four corpus parts), and
/// fractions of it would ask for caches no tier holds.
pub fn cache_bytes_for_fraction(
    reader: &IndexReader,
    segment_size: usize,
    fraction: f64,
) -> Result<u64, StackError> {
    let postings: u64 = reader
        .segments()
        .iter()
        .map(|s| s.postings_len() as u64)
        .sum();
    let bytes = (postings as f64 * fraction) as u64;
    if fraction >= 1.0 {
        Ok(bytes.max(whole_index_cache_bytes(reader, segment_size)?))
    } else {
        Ok(bytes)
    }
}

/// The bytes the whole index takes in a postings cache of `segment_size`-byte segments: every
/// term's block table and blocks, laid out as the cache lays them out (a term owns whole
/// segments; a block never straddles two). A cache of this size, warmed, misses nothing.
pub fn whole_index_cache_bytes(
    reader: &IndexReader,
    segment_size: usize,
) -> Result<u64, StackError> {
    let mut segments = 0u64;
    let mut layout = TermLayout::default();
    for segment in reader.segments() {
        for TermEntry { info, .. } in sound_entries(segment) {
            layout.plan_into(&info, &segment.term_skip_entries(&info)?, segment_size)?;
            segments += u64::from(layout.segments);
        }
    }
    Ok(segments * segment_size as u64)
}

/// The entries of `segment`'s terms whose metadata passes its checks, in ordinal order.
///
/// The cache is sized over the whole vocabulary, but a term in a damaged group of records
/// must not stop the index from being served (its queries fail on their own, when they look
/// it up), nor size the cache by whatever its damaged record claims: it is left out.
fn sound_entries(segment: &SegmentReader) -> impl Iterator<Item = TermEntry> + '_ {
    let mut entries = segment.entries_in_order();
    (0..segment.meta().terms).filter_map(move |ordinal| entries.get(ordinal).ok())
}

/// The most segments any term of `reader` needs in a cache of `segment_size`-byte segments.
pub fn largest_term_segments(reader: &IndexReader, segment_size: usize) -> Result<u32, StackError> {
    let mut most = 0;
    let mut layout = TermLayout::default();
    for segment in reader.segments() {
        // The largest term by bytes needs the most segments, up to the slack the packing
        // leaves (at most one segment per block in the worst case); measure the few
        // largest exactly.
        let mut largest: Vec<(u64, TermEntry)> = Vec::new();
        for entry in sound_entries(segment) {
            let info = &entry.info;
            largest.push((info.postings_bytes() + info.blocks() as u64 * 8, entry));
            if largest.len() > 64 {
                largest.sort_unstable_by_key(|(bytes, entry)| Reverse((*bytes, entry.ordinal)));
                largest.truncate(16);
            }
        }
        largest.sort_unstable_by_key(|(bytes, entry)| Reverse((*bytes, entry.ordinal)));
        for (_, TermEntry { info, .. }) in largest.iter().take(16) {
            layout.plan_into(info, &segment.term_skip_entries(info)?, segment_size)?;
            most = most.max(layout.segments);
        }
    }
    Ok(most)
}

/// Opens the index in `dir` for serving, a partial one only if `config` allows it.
fn open_reader(
    dir: &Path,
    config: &ServingConfig,
    metadata_dir: Option<&Path>,
) -> Result<IndexReader, IndexError> {
    if config.allow_partial {
        IndexReader::open_accepting_partial(dir, LoadMode::Mmap, metadata_dir)
    } else {
        IndexReader::open_placed(dir, LoadMode::Mmap, metadata_dir)
    }
}

impl ServingStack {
    /// Assembles the stack for the index in `dir`; `progress` hears about the slow steps.
    pub fn assemble(
        dir: &Path,
        config: &ServingConfig,
        mut progress: impl FnMut(&str),
    ) -> Result<ServingStack, StackError> {
        let mut warnings = Vec::new();
        let reader = open_reader(dir, config, None)?;
        if let Some(note) = apcache_index::Manifest::load(dir)?.incomplete_note() {
            warnings.push(format!("{}: {note}", dir.display()));
        }

        if let (true, Some(limit)) = (config.metadata_in_budget, config.memory_limit) {
            let bytes = PlacedMetadata::bytes(dir)?;
            if bytes >= limit {
                return Err(StackError::Config(format!(
                    "the metadata ({}) cannot be held in DRAM under a {} limit; place it in \
                     the tier (drop --metadata-in-budget) or raise --memory-limit",
                    format_bytes(bytes),
                    format_bytes(limit)
                )));
            }
        }

        // 1. The tier, populated before any limit applies.
        let mut tier_description = None;
        let mut cache = None;
        if config.mode.uses_cache() {
            let bytes = config.cache_bytes.ok_or_else(|| {
                StackError::Config(format!("mode {} needs --cache-size", config.mode.name()))
            })?;
            let needed = largest_term_segments(&reader, config.cache.segment_size)?;
            let segments = bytes / config.cache.segment_size as u64;
            if segments < u64::from(needed) {
                return Err(StackError::Config(format!(
                    "a cache of {} holds {segments} segments of {}; the largest term needs \
                     {needed} (raise --cache-size to at least {})",
                    format_bytes(bytes),
                    format_bytes(config.cache.segment_size as u64),
                    format_bytes(u64::from(needed) * config.cache.segment_size as u64),
                )));
            }
            let region = match &config.tier_file {
                Some(path) => TierRegion::open_existing(path, bytes)?,
                None => {
                    let region = TierRegion::create(&config.tier, bytes)?;
                    progress(&format!("populating the tier: {}", region.describe()));
                    region.populate()?;
                    region
                }
            };
            tier_description = Some(format!(
                "{}; populated before the DRAM limit applied (charged outside the budget)",
                region.describe()
            ));
            let loaders = postings_paths(dir, &reader)?
                .iter()
                .map(|p| open_loader(config.loader, p, &config.loader_options))
                .collect::<Result<Vec<_>, _>>()?;
            cache = Some(PostingsCache::new(region, config.cache, loaders)?);
        }
        let result_cache_region = match (&config.result_cache, config.result_cache_in_tier) {
            (Some(result_cache), true) => {
                let region = TierRegion::create(&config.tier, result_cache.bytes)?;
                progress(&format!(
                    "populating the result cache's tier: {}",
                    region.describe()
                ));
                region.populate()?;
                Some(Arc::new(region))
            }
            _ => None,
        };
        if let Some(Emulation { latency, bandwidth }) = config.loader_options.emulation {
            warnings.push(format!(
                "storage is EMULATED as a slow device: +{} µs per read{}",
                latency.as_micros(),
                bandwidth.map_or(String::new(), |b| format!(", {} MiB/s cap", b >> 20))
            ));
        }

        // The metadata's copies, like the tier, are written before the budget applies
        // (unless they stand for DRAM, below).
        let mut placed = match &config.metadata_dir {
            Some(tier_dir) if !config.metadata_in_budget => {
                Some(PlacedMetadata::copy(dir, tier_dir)?)
            }
            _ => None,
        };

        // 2. The DRAM budget.
        let mut cgroup = None;
        let mut dram_description = "no DRAM limit".to_string();
        if let Some(limit) = config.memory_limit {
            match MemoryCgroup::create_and_join(limit) {
                Ok(group) => {
                    dram_description = group.describe();
                    cgroup = Some(group);
                }
                Err(e) => {
                    dram_description = format!("DRAM limit NOT enforced: {e}");
                    warnings.push(dram_description.clone());
                }
            }
        }

        // 3. Metadata held in DRAM is copied inside the budget.
        if let (Some(tier_dir), true) = (&config.metadata_dir, config.metadata_in_budget) {
            placed = Some(PlacedMetadata::copy(dir, tier_dir)?);
        }
        let metadata_description = match &placed {
            Some(p) if config.metadata_in_budget => format!(
                "dictionary, term infos, skip entries and norms copied to {} after the DRAM \
                 limit applied (charged to the budget: held in DRAM)",
                p.dir.display()
            ),
            Some(p) => format!(
                "dictionary, term infos, skip entries and norms copied to {} before the DRAM \
                 limit applied",
                p.dir.display()
            ),
            None => "dictionary, term infos, skip entries and norms read from storage (page \
                     cache, inside the budget)"
                .to_string(),
        };

        // 4. The index leaves the page cache (when asked) and is opened again, reading the
        //    metadata from its copies.
        let reader = if config.cold_start || placed.is_some() || cgroup.is_some() {
            drop(reader);
            let files = page_cache::index_files(dir)?;
            let drop_files = || {
                page_cache::drop_from_page_cache(&files)
                    .map_err(StackError::io("dropping the index from the page cache"))
            };
            if config.cold_start || cgroup.is_some() {
                drop_files()?;
            }
            let mut reader = open_reader(dir, config, placed.as_ref().map(|p| p.dir.as_path()))?;
            if config.cold_start || cgroup.is_some() {
                drop_files()?;
            }
            if cgroup.is_some() {
                // A hit's stored document would otherwise stay in the page cache, charged to
                // the budget: read the store past it.
                let how = match reader.read_store_uncached(dir)? {
                    UncachedReads::Direct => "O_DIRECT",
                    UncachedReads::DropAfterRead => "buffered reads dropped from the page cache",
                };
                dram_description.push_str(&format!(
                    "; stored documents read past the page cache ({how})"
                ));
            }
            reader
        } else {
            reader
        };

        Ok(ServingStack {
            config: config.clone(),
            dir: dir.to_path_buf(),
            reader,
            cache,
            cgroup,
            tier_description,
            metadata_description,
            dram_description,
            warnings,
            placed,
            result_cache: config.result_cache.map(|c| match result_cache_region {
                Some(region) => ResultCache::in_region(c, region),
                None => ResultCache::new(c),
            }),
        })
    }

    /// Where the metadata copies are, if the metadata was placed.
    pub fn metadata_copies(&self) -> Option<&Path> {
        self.placed.as_ref().map(|p| p.dir.as_path())
    }

    /// The segments the cache holds in all (cache modes).
    pub fn cache_segments(&self) -> Option<u32> {
        self.cache.as_ref().map(PostingsCache::total_segments)
    }
}
