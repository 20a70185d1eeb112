//! The read planner's hook into encryption: an encrypted filter is two GCM modules (header,
//! then bitset), each read and authenticated whole. [`SealedFilter`] says which bytes to read
//! next and opens them once read; the planner only moves bytes.

use super::{module, ModuleKey, GCM_OVERHEAD};
use crate::format::header::{BloomFilterHeader, MAX_HEADER_BYTES};
use crate::io::{Fetched, Range};
use bytes::Bytes;

/// Bytes an encrypted bitset module takes beyond the bitset: its length prefix, nonce and tag.
pub(crate) const SEALED_BITSET_OVERHEAD: u64 = 4 + GCM_OVERHEAD;

/// An encrypted filter on its way to being read.
#[derive(Debug, Clone)]
pub(crate) struct SealedFilter {
    key: ModuleKey,
    /// The footer's `bloom_filter_length`, when it gives one.
    length: Option<u64>,
    /// Where the data area ends: nothing of a filter may lie at or after it.
    footer_start: u64,
    state: State,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// The header module (with its length prefix) is in `[offset, offset + window)`, or the
    /// whole filter is when `window` is the footer's `bloom_filter_length`.
    NeedHeader { offset: u64, window: u64 },
    /// The header module is `header_total` bytes (length prefix included); the bitset module
    /// follows, `SEALED_BITSET_OVERHEAD + num_bytes` bytes.
    NeedBitset {
        offset: u64,
        header_total: u64,
        num_bytes: u64,
    },
}

/// A filter decrypted and authenticated.
#[derive(Debug, Clone)]
pub(crate) struct OpenFilter {
    /// Offset of the header module.
    pub offset: u64,
    /// Bytes of the header module, length prefix included.
    pub header_total: u64,
    /// The plaintext bitset.
    pub bitset: Bytes,
}

/// What one step gave.
#[derive(Debug)]
pub(crate) enum Step {
    /// More bytes are needed ([`SealedFilter::next_read`]).
    Pending(SealedFilter),
    /// Both modules opened.
    Open(OpenFilter),
    /// The filter cannot be used: why.
    Failed(String),
}

impl SealedFilter {
    /// An encrypted filter at `offset` under `key`. With a `bloom_filter_length` that fits the
    /// data area both modules come in one read; without, the header module is read first, as
    /// much as the largest header module takes.
    pub(crate) fn new(
        offset: u64,
        length: Option<u64>,
        footer_start: u64,
        key: ModuleKey,
    ) -> SealedFilter {
        let window = match length {
            Some(l) if offset.saturating_add(l) <= footer_start => l,
            _ => (4 + GCM_OVERHEAD + MAX_HEADER_BYTES as u64)
                .min(footer_start.saturating_sub(offset)),
        };
        SealedFilter {
            key,
            length,
            footer_start,
            state: State::NeedHeader { offset, window },
        }
    }

    /// The bytes to read next.
    pub(crate) fn next_read(&self) -> Range {
        match self.state {
            State::NeedHeader { offset, window } => Range {
                start: offset,
                end: offset + window,
            },
            State::NeedBitset {
                offset,
                header_total,
                num_bytes,
            } => {
                let start = offset + header_total;
                Range {
                    start,
                    end: start + SEALED_BITSET_OVERHEAD + num_bytes,
                }
            }
        }
    }

    /// Opens what `fetched` holds of the filter, and says what comes next.
    pub(crate) fn advance(self, fetched: &Fetched) -> Step {
        let fail = Step::Failed;
        match self.state {
            State::NeedHeader { offset, window } => {
                let len = match fetched.get(offset, 4) {
                    Ok(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
                    Err(e) => return fail(format!("cannot read the filter header: {e}")),
                };
                if len <= GCM_OVERHEAD || len > GCM_OVERHEAD + MAX_HEADER_BYTES as u64 {
                    return fail(not_a_module(fetched, offset, len));
                }
                let header_total = 4 + len;
                if offset + header_total > self.footer_start {
                    return fail(format!(
                        "the encrypted filter header at offset {offset} runs past the data area"
                    ));
                }
                if header_total > window {
                    // Only when bloom_filter_length was too short for the header: read it alone.
                    return Step::Pending(SealedFilter {
                        state: State::NeedHeader {
                            offset,
                            window: header_total,
                        },
                        ..self
                    });
                }
                let header = match fetched.get(offset + 4, len) {
                    Ok(b) => b,
                    Err(e) => return fail(format!("cannot read the filter header: {e}")),
                };
                let Some(plain) = self.key.open(module::BLOOM_FILTER_HEADER, &header) else {
                    return fail(
                        "the encrypted filter header did not authenticate (wrong key, or altered)"
                            .into(),
                    );
                };
                // Bytes after the header's stop byte are ignored: parquet-java 1.17 encrypts
                // a 100-byte buffer, the header and then zeros (authenticated all the same).
                let num_bytes = match BloomFilterHeader::parse(&plain) {
                    Ok((h, _)) => h.num_bytes as u64,
                    Err(e) => return fail(format!("decrypted filter header: {e}")),
                };
                let total = header_total + SEALED_BITSET_OVERHEAD + num_bytes;
                if offset + total > self.footer_start {
                    return fail(format!(
                        "the encrypted filter ({total} bytes at offset {offset}) runs past the data area (footer at {})",
                        self.footer_start
                    ));
                }
                if let Some(l) = self.length {
                    if l != total {
                        return fail(format!(
                            "bloom_filter_length {l} disagrees with the encrypted modules ({total} bytes)"
                        ));
                    }
                }
                let next = SealedFilter {
                    state: State::NeedBitset {
                        offset,
                        header_total,
                        num_bytes,
                    },
                    ..self
                };
                if total <= window {
                    // Both modules came in one read.
                    next.advance(fetched)
                } else {
                    Step::Pending(next)
                }
            }
            State::NeedBitset {
                offset,
                header_total,
                num_bytes,
            } => {
                let start = offset + header_total;
                let module = match fetched.get(start, SEALED_BITSET_OVERHEAD + num_bytes) {
                    Ok(b) => b,
                    Err(e) => return fail(format!("cannot read the filter bitset: {e}")),
                };
                let len = u32::from_le_bytes([module[0], module[1], module[2], module[3]]) as u64;
                if len != GCM_OVERHEAD + num_bytes {
                    return fail(format!(
                        "the encrypted bitset module is {len} bytes; a {num_bytes}-byte bitset takes {}",
                        GCM_OVERHEAD + num_bytes
                    ));
                }
                match self.key.open(module::BLOOM_FILTER_BITSET, &module[4..]) {
                    Some(bitset) => Step::Open(OpenFilter {
                        offset,
                        header_total,
                        bitset: Bytes::from(bitset),
                    }),
                    None => fail(
                        "the encrypted filter bitset did not authenticate (wrong key, or altered)"
                            .into(),
                    ),
                }
            }
        }
    }
}

/// Why the bytes at an encrypted filter's offset are no header module: a plaintext header
/// there is named as such (a leak, and not authenticated, so it is not used).
fn not_a_module(fetched: &Fetched, offset: u64, len: u64) -> String {
    let plaintext = fetched
        .get(offset, MAX_HEADER_BYTES.min(16) as u64)
        .ok()
        .is_some_and(|b| BloomFilterHeader::parse(&b).is_ok());
    if plaintext {
        "the filter of this encrypted column is stored in plaintext: it reveals the column's values, and it is not authenticated, so it is not used".into()
    } else {
        format!("no encrypted filter header at offset {offset} (module length {len})")
    }
}
