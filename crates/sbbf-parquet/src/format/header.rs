//! `BloomFilterHeader`, the Thrift compact-protocol struct in front of every bitset.
//!
//! Decoded with the `thrift` crate's compact protocol, configured with small string and
//! container limits: the bytes come from untrusted files, and the crate's defaults would
//! allocate whatever a length prefix claims (up to 100 MiB per string). Only the four fields of
//! `parquet.thrift` are interpreted; unknown fields are skipped, as Thrift evolution requires.

use std::io::Read;
use std::sync::Arc;
use thrift::protocol::{
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol,
    TOutputProtocol, TStructIdentifier, TType,
};
use thrift::TConfiguration;

/// The largest header we accept. The standard header is 15 to 19 bytes; this leaves room for
/// fields a future writer may add while keeping reads of a hostile header bounded.
pub const MAX_HEADER_BYTES: usize = 1024;

/// A decoded header whose algorithm, hash and compression are the ones this crate understands
/// (`BLOCK`, `XXHASH`, `UNCOMPRESSED`, the only members `parquet.thrift` defines today).
///
/// ```
/// use sbbf_parquet::format::header::BloomFilterHeader;
/// let h = BloomFilterHeader { num_bytes: 1024 };
/// let bytes = h.to_bytes();
/// assert_eq!(bytes.len(), 16);
/// let (back, len) = BloomFilterHeader::parse(&bytes).unwrap();
/// assert_eq!((back, len), (h, 16));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomFilterHeader {
    /// Size of the bitset that follows, in bytes.
    pub num_bytes: i32,
}

/// Why a header could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The bytes ended before the header did.
    #[error("the Bloom filter header is truncated")]
    Truncated,
    /// Not valid compact-protocol Thrift (or larger or deeper than the limits allow).
    #[error("malformed Bloom filter header: {0}")]
    Malformed(#[source] Arc<thrift::Error>),
    /// A required field is absent.
    #[error("the Bloom filter header has no `{0}` field")]
    MissingField(&'static str),
    /// A known field has the wrong Thrift type.
    #[error(
        "field `{field}` of the Bloom filter header has Thrift type {found}, expected {expected}"
    )]
    WrongType {
        /// Field name.
        field: &'static str,
        /// Type found.
        found: String,
        /// Type the spec gives it.
        expected: &'static str,
    },
    /// An algorithm, hash or compression this crate does not know (e.g. from a newer writer).
    #[error("unsupported Bloom filter {field}: union member {id} (only {known} is defined)")]
    Unsupported {
        /// `algorithm`, `hash` or `compression`.
        field: &'static str,
        /// The union member's field id.
        id: i16,
        /// The one member we understand.
        known: &'static str,
    },
    /// A union with no member or several.
    #[error("Bloom filter header field `{0}` must hold exactly one union member")]
    BadUnion(&'static str),
    /// `num_bytes` is not a multiple of 32 within [32 B, 128 MiB].
    #[error("Bloom filter bitset size {0} is not a multiple of 32 bytes within [32 B, 128 MiB]")]
    InvalidNumBytes(i32),
}

impl BloomFilterHeader {
    /// Decodes a header from the start of `bytes`; returns it with the number of bytes it took.
    /// The `num_bytes` it announces is validated; `bytes` may hold more (the bitset) or exactly
    /// the header.
    ///
    /// ```
    /// use sbbf_parquet::format::header::{BloomFilterHeader, HeaderError};
    /// // parquet-mr's header for a 1024-byte filter
    /// let raw = [0x15, 0x80, 0x10, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0];
    /// assert_eq!(BloomFilterHeader::parse(&raw).unwrap().0.num_bytes, 1024);
    /// assert!(matches!(BloomFilterHeader::parse(&raw[..5]), Err(HeaderError::Truncated)));
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<(BloomFilterHeader, usize), HeaderError> {
        let window = &bytes[..bytes.len().min(MAX_HEADER_BYTES)];
        let mut cursor: &[u8] = window;
        let header = {
            let config = bounded_thrift(MAX_HEADER_BYTES, 16)
                .map_err(|e| HeaderError::Malformed(Arc::new(e)))?;
            let mut p = TCompactInputProtocol::with_config(&mut cursor, config);
            read_header(&mut p)?
        };
        let used = window.len() - cursor.len();
        let n = header.num_bytes;
        if n < 32 || n as usize > sbbf::MAX_BYTES || n % 32 != 0 {
            return Err(HeaderError::InvalidNumBytes(n));
        }
        Ok((header, used))
    }

    /// Encodes the header exactly as parquet-java, Arrow C++ and arrow-rs do.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20);
        {
            let mut p = TCompactOutputProtocol::new(&mut out);
            write_header(&mut p, self.num_bytes).expect("writing to a Vec cannot fail");
        }
        out
    }

    /// The length of the standard encoding of a header announcing `num_bytes`.
    ///
    /// ```
    /// assert_eq!(sbbf_parquet::format::header::BloomFilterHeader::encoded_len(1024), 16);
    /// assert_eq!(sbbf_parquet::format::header::BloomFilterHeader::encoded_len(32), 15);
    /// ```
    pub fn encoded_len(num_bytes: i32) -> usize {
        // field header + zigzag varint of num_bytes + three one-member unions (4 bytes each) + stop
        let zigzag = ((num_bytes << 1) ^ (num_bytes >> 31)) as u32;
        let varint = (32 - zigzag.leading_zeros()).div_ceil(7).max(1) as usize;
        1 + varint + 12 + 1
    }

    /// Given a footer's `bloom_filter_length` (header plus bitset), the bitset size a standard
    /// header would announce, if exactly one fits.
    ///
    /// ```
    /// use sbbf_parquet::format::header::BloomFilterHeader;
    /// assert_eq!(BloomFilterHeader::num_bytes_for_total(1040), Some(1024));
    /// assert_eq!(BloomFilterHeader::num_bytes_for_total(47), Some(32));
    /// ```
    pub fn num_bytes_for_total(total: i64) -> Option<i32> {
        let mut found = None;
        for varint in 1..=5i64 {
            let n = total - (14 + varint);
            if n >= 32 && n <= sbbf::MAX_BYTES as i64 && n % 32 == 0 {
                let n = n as i32;
                if Self::encoded_len(n) as i64 + n as i64 == total {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(n);
                }
            }
        }
        found
    }
}

/// A Thrift configuration for untrusted bytes: no string, container or message larger than
/// `limit` (the bytes at hand), and at most `depth` levels of nesting. The `thrift` crate's
/// defaults would allocate up to 100 MiB for a single length prefix.
pub(crate) fn bounded_thrift(limit: usize, depth: usize) -> thrift::Result<TConfiguration> {
    TConfiguration::builder()
        .max_message_size(Some(limit))
        .max_frame_size(Some(limit))
        .max_string_size(Some(limit))
        .max_container_size(Some(limit))
        .max_recursion_depth(Some(depth))
        .build()
}

/// The thrift crate reports every end of input (its reads from a byte slice fail with
/// `UnexpectedEof`) as a transport error of kind `EndOfFile`.
fn thrift_err(e: thrift::Error) -> HeaderError {
    match &e {
        thrift::Error::Transport(t) if t.kind == thrift::TransportErrorKind::EndOfFile => {
            HeaderError::Truncated
        }
        _ => HeaderError::Malformed(Arc::new(e)),
    }
}

fn read_header<R: Read>(
    p: &mut TCompactInputProtocol<R>,
) -> Result<BloomFilterHeader, HeaderError> {
    p.read_struct_begin().map_err(thrift_err)?;
    let (mut num_bytes, mut algorithm, mut hash, mut compression) = (None, false, false, false);
    loop {
        let field = p.read_field_begin().map_err(thrift_err)?;
        if field.field_type == TType::Stop {
            break;
        }
        match field.id {
            Some(1) => {
                expect_type("num_bytes", field.field_type, TType::I32, "i32")?;
                num_bytes = Some(p.read_i32().map_err(thrift_err)?);
            }
            Some(2) => {
                expect_type("algorithm", field.field_type, TType::Struct, "struct")?;
                read_union(p, "algorithm", "BLOCK")?;
                algorithm = true;
            }
            Some(3) => {
                expect_type("hash", field.field_type, TType::Struct, "struct")?;
                read_union(p, "hash", "XXHASH")?;
                hash = true;
            }
            Some(4) => {
                expect_type("compression", field.field_type, TType::Struct, "struct")?;
                read_union(p, "compression", "UNCOMPRESSED")?;
                compression = true;
            }
            _ => p.skip(field.field_type).map_err(thrift_err)?,
        }
        p.read_field_end().map_err(thrift_err)?;
    }
    p.read_struct_end().map_err(thrift_err)?;
    let num_bytes = num_bytes.ok_or(HeaderError::MissingField("num_bytes"))?;
    if !algorithm {
        return Err(HeaderError::MissingField("algorithm"));
    }
    if !hash {
        return Err(HeaderError::MissingField("hash"));
    }
    if !compression {
        return Err(HeaderError::MissingField("compression"));
    }
    Ok(BloomFilterHeader { num_bytes })
}

fn expect_type(
    field: &'static str,
    found: TType,
    want: TType,
    expected: &'static str,
) -> Result<(), HeaderError> {
    if found == want {
        Ok(())
    } else {
        Err(HeaderError::WrongType {
            field,
            found: format!("{found:?}"),
            expected,
        })
    }
}

/// Reads a union whose only member we understand is field 1 (an empty struct).
fn read_union<R: Read>(
    p: &mut TCompactInputProtocol<R>,
    name: &'static str,
    known: &'static str,
) -> Result<(), HeaderError> {
    p.read_struct_begin().map_err(thrift_err)?;
    let mut members = 0;
    let mut unknown = None;
    loop {
        let field = p.read_field_begin().map_err(thrift_err)?;
        if field.field_type == TType::Stop {
            break;
        }
        members += 1;
        let id = field.id.unwrap_or(0);
        if id != 1 || field.field_type != TType::Struct {
            unknown.get_or_insert(id);
        }
        // The member's content (an empty struct for the known ones) carries nothing we need.
        p.skip(field.field_type).map_err(thrift_err)?;
        p.read_field_end().map_err(thrift_err)?;
    }
    p.read_struct_end().map_err(thrift_err)?;
    if let Some(id) = unknown {
        return Err(HeaderError::Unsupported {
            field: name,
            id,
            known,
        });
    }
    if members != 1 {
        return Err(HeaderError::BadUnion(name));
    }
    Ok(())
}

fn write_header<W: std::io::Write>(
    p: &mut TCompactOutputProtocol<W>,
    num_bytes: i32,
) -> thrift::Result<()> {
    p.write_struct_begin(&TStructIdentifier::new("BloomFilterHeader"))?;
    p.write_field_begin(&TFieldIdentifier::new("numBytes", TType::I32, 1))?;
    p.write_i32(num_bytes)?;
    p.write_field_end()?;
    for (id, name) in [(2, "algorithm"), (3, "hash"), (4, "compression")] {
        p.write_field_begin(&TFieldIdentifier::new(name, TType::Struct, id))?;
        // A union holding its member 1, an empty struct.
        p.write_struct_begin(&TStructIdentifier::new(name))?;
        p.write_field_begin(&TFieldIdentifier::new("member", TType::Struct, 1))?;
        p.write_struct_begin(&TStructIdentifier::new("empty"))?;
        p.write_field_stop()?;
        p.write_struct_end()?;
        p.write_field_end()?;
        p.write_field_stop()?;
        p.write_struct_end()?;
        p.write_field_end()?;
    }
    p.write_field_stop()?;
    p.write_struct_end()?;
    p.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARQUET_MR_1024: [u8; 16] = [
        0x15, 0x80, 0x10, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0,
    ];

    #[test]
    fn writes_what_parquet_mr_writes() {
        assert_eq!(
            BloomFilterHeader { num_bytes: 1024 }.to_bytes(),
            PARQUET_MR_1024
        );
    }

    #[test]
    fn encoded_len_matches_encoding() {
        for n in [32, 64, 1024, 8192, 1 << 20, sbbf::MAX_BYTES as i32] {
            assert_eq!(
                BloomFilterHeader { num_bytes: n }.to_bytes().len(),
                BloomFilterHeader::encoded_len(n)
            );
            let total = BloomFilterHeader::encoded_len(n) as i64 + n as i64;
            assert_eq!(BloomFilterHeader::num_bytes_for_total(total), Some(n));
        }
    }

    #[test]
    fn rejects_bad_sizes() {
        for n in [0, -32, 31, 33, sbbf::MAX_BYTES as i32 + 32, i32::MAX] {
            let b = BloomFilterHeader { num_bytes: n }.to_bytes();
            assert!(matches!(
                BloomFilterHeader::parse(&b),
                Err(HeaderError::InvalidNumBytes(m)) if m == n
            ));
        }
    }

    #[test]
    fn unknown_union_member_is_unsupported() {
        let mut b = PARQUET_MR_1024;
        b[4] = 0x2c; // algorithm member 2 instead of 1
        assert!(matches!(
            BloomFilterHeader::parse(&b),
            Err(HeaderError::Unsupported {
                field: "algorithm",
                id: 2,
                ..
            })
        ));
    }

    #[test]
    fn missing_field() {
        // num_bytes then stop
        assert!(matches!(
            BloomFilterHeader::parse(&[0x15, 0x80, 0x10, 0x00]),
            Err(HeaderError::MissingField("algorithm"))
        ));
    }

    #[test]
    fn wrong_type() {
        // field 1 as i64
        let b = [0x16, 0x80, 0x10, 0x00];
        assert!(matches!(
            BloomFilterHeader::parse(&b),
            Err(HeaderError::WrongType {
                field: "num_bytes",
                ..
            })
        ));
    }

    #[test]
    fn every_cut_is_truncated() {
        // The standard header, and one with an unknown binary field 5 before the stop byte.
        let mut longer = PARQUET_MR_1024[..15].to_vec();
        longer.extend_from_slice(&[0x58, 3, b'a', b'b', b'c', 0]);
        for whole in [&PARQUET_MR_1024[..], &longer[..]] {
            assert!(BloomFilterHeader::parse(whole).is_ok());
            for cut in 0..whole.len() {
                assert!(
                    matches!(
                        BloomFilterHeader::parse(&whole[..cut]),
                        Err(HeaderError::Truncated)
                    ),
                    "cut at {cut}: {:?}",
                    BloomFilterHeader::parse(&whole[..cut])
                );
            }
        }
    }

    #[test]
    fn huge_string_claim_does_not_allocate() {
        // an unknown field 5 of type binary claiming 4 GiB
        let b = [0x58, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(matches!(
            BloomFilterHeader::parse(&b),
            Err(HeaderError::Malformed(_))
        ));
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut b = vec![0x5c; 10_000]; // field 5, struct, nested again and again
        b.push(0);
        assert!(BloomFilterHeader::parse(&b).is_err());
    }

    #[test]
    fn legacy_murmur3_blob_is_rejected() {
        let blob = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/golden/bloom_filter.bin"
        ))
        .unwrap();
        assert!(BloomFilterHeader::parse(&blob).is_err());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = BloomFilterHeader::parse(&bytes);
        }
    }
}
