//! Byte sizes on the command line: one grammar for every flag (`64MiB`, `1.5G`, `512K`,
//! `4096`; units are powers of 1024 however they are spelt), the tier crate's
//! [`parse_size`](apcache_tier::cgroup::parse_size).

/// A clap value parser for a size in bytes.
pub fn bytes(text: &str) -> Result<u64, String> {
    apcache_tier::cgroup::parse_size(text).map_err(|e| e.to_string())
}

/// A clap value parser for a size in bytes that must fit in memory (`usize`).
pub fn bytes_usize(text: &str) -> Result<usize, String> {
    let bytes = bytes(text)?;
    usize::try_from(bytes).map_err(|_| format!("{text:?} is too large for this machine"))
}

#[cfg(test)]
mod tests {
    use super::{bytes, bytes_usize};

    #[test]
    fn one_grammar_for_every_size_flag() {
        assert_eq!(bytes("1G"), Ok(1 << 30));
        assert_eq!(bytes("1GiB"), Ok(1 << 30));
        assert_eq!(bytes("300MB"), Ok(300 << 20));
        assert_eq!(bytes("1.5K"), Ok(1536));
        assert_eq!(bytes_usize("4096"), Ok(4096));
        assert!(bytes("lots").is_err());
        assert!(bytes("").is_err());
        assert!(bytes("1Q").is_err());
    }
}
