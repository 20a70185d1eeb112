//! Finding plaintext Bloom filter headers by their bytes, without the footer: a standard
//! header is field 1 (`num_bytes`, `0x15` and a varint) then always the same 13 bytes (the
//! `BLOCK`, `XXHASH` and `UNCOMPRESSED` union members and the stop byte). In an encrypted
//! file, a header in bytes that no visible column chunk accounts for is most likely the
//! plaintext filter of an encrypted column (arrow-rs 60 writes them so): it reveals which
//! values that column holds to anyone with the file.

use crate::format::header::BloomFilterHeader;
use crate::io::{read_range, Range};
use parquet::file::reader::ChunkReader;

/// The bytes after `num_bytes` in every standard header.
const TAIL: [u8; 13] = [
    0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00, 0x00,
];

/// Bytes read at a time when scanning a range.
const WINDOW: u64 = 8 << 20;

/// A plaintext filter header found by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrayHeader {
    /// Offset of the header in the file.
    pub offset: u64,
    /// The bitset size it announces.
    pub num_bytes: i32,
}

/// The warning `inspect` gives for it (the CLI and the Python package print the same words).
impl std::fmt::Display for StrayHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "plaintext Bloom filter header at offset {} ({}-byte bitset) in bytes no visible column chunk accounts for: most likely the filter of an encrypted column, which reveals its values",
            self.offset, self.num_bytes
        )
    }
}

/// The standard headers in `bytes` (which start at file offset `base`) whose bitset fits before
/// `limit`.
pub(crate) fn find_headers(bytes: &[u8], base: u64, limit: u64) -> Vec<StrayHeader> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = find(&bytes[from..], &TAIL).map(|p| p + from) {
        from = p + 1;
        // `0x15` and a varint of 1 to 5 bytes right before the tail.
        for start in (p.saturating_sub(6)..p.saturating_sub(1)).rev() {
            if bytes[start] != 0x15 {
                continue;
            }
            if let Ok((h, len)) = BloomFilterHeader::parse(&bytes[start..]) {
                let offset = base + start as u64;
                if start + len == p + TAIL.len()
                    && offset + len as u64 + h.num_bytes as u64 <= limit
                {
                    out.push(StrayHeader {
                        offset,
                        num_bytes: h.num_bytes,
                    });
                    break;
                }
            }
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Scans `[range.start, range.end)` of a file, a window at a time, for standard headers whose
/// bitset ends before `limit` (the footer).
pub(crate) fn scan_range<R: ChunkReader>(
    reader: &R,
    range: Range,
    limit: u64,
) -> Result<Vec<StrayHeader>, crate::ReadError> {
    let mut out = Vec::new();
    let mut start = range.start;
    while start < range.end {
        // Windows overlap by a header's length so that none is cut in two.
        let end = (start + WINDOW).min(range.end);
        let bytes = read_range(reader, Range { start, end })?;
        for h in find_headers(&bytes, start, limit) {
            if out.last() != Some(&h) {
                out.push(h);
            }
        }
        if end == range.end {
            break;
        }
        start = end - 19;
    }
    Ok(out)
}

/// Plaintext filter headers anywhere in a file's data area (after the leading magic, before the
/// footer): for an encrypted file whose footer cannot be read, where no chunk is visible.
pub fn scan_data_area<R: ChunkReader>(
    reader: &R,
    footer_start: u64,
) -> Result<Vec<StrayHeader>, crate::Error> {
    Ok(scan_range(
        reader,
        Range {
            start: 4.min(footer_start),
            end: footer_start,
        },
        footer_start,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_standard_headers_only() {
        let h = BloomFilterHeader { num_bytes: 1024 }.to_bytes();
        let mut bytes = vec![0x15u8; 10];
        bytes.extend_from_slice(&h);
        bytes.extend_from_slice(&[0; 1024]);
        let found = find_headers(&bytes, 100, 100 + bytes.len() as u64);
        assert_eq!(
            found,
            [StrayHeader {
                offset: 110,
                num_bytes: 1024
            }]
        );
        // A bitset that would run past the limit is no filter.
        assert!(find_headers(&bytes, 100, 100 + bytes.len() as u64 - 1).is_empty());
        assert!(find_headers(&[0u8; 64], 0, 64).is_empty());
    }
}
