//! Avro object container files (manifest lists, manifests) checked before they are decoded:
//! every block must inflate to at most [`MAX_BLOCK`] bytes. apache-avro inflates a block
//! into memory whole, with no bound: a 256 MiB deflate block of zeros would ask for about
//! 260 GB and abort the process. Blocks are inflated here once more, up to the bound, which
//! for manifests (Java writes 64 kB blocks) costs little.

use super::Context;
use sbbf_parquet::Error;

/// The most one block of a manifest list or manifest may inflate to.
pub(super) const MAX_BLOCK: usize = 64 << 20;

/// Checks the Avro container `bytes` (`file` names it): its header and blocks are well formed
/// and no block inflates past `limit` bytes.
pub(super) fn check(bytes: &[u8], cx: &Context, file: &str, limit: usize) -> Result<(), Error> {
    let bad = |why: &str| cx.error(format!("{file} is not a readable Avro file ({why})"));
    let mut r = Bytes { b: bytes, pos: 0 };
    if r.take(4) != Some(b"Obj\x01".as_slice()) {
        return Err(bad("no Avro magic"));
    }
    let mut codec: Option<&[u8]> = None;
    loop {
        let count = r.long().ok_or_else(|| bad("truncated header"))?;
        if count == 0 {
            break;
        }
        if count < 0 {
            // A negative count is followed by the block's size in bytes.
            r.long().ok_or_else(|| bad("truncated header"))?;
        }
        for _ in 0..count.unsigned_abs() {
            let key = r.bytes().ok_or_else(|| bad("truncated header"))?;
            let value = r.bytes().ok_or_else(|| bad("truncated header"))?;
            if key == b"avro.codec" {
                codec = Some(value);
            }
        }
    }
    r.take(16).ok_or_else(|| bad("truncated header"))?;
    let too_big = || {
        cx.error(format!(
            "{file}: a block inflates to more than {limit} bytes"
        ))
    };
    while r.pos < bytes.len() {
        r.long().ok_or_else(|| bad("truncated block"))?;
        let data = r.bytes().ok_or_else(|| bad("truncated block"))?;
        r.take(16).ok_or_else(|| bad("truncated block"))?;
        match codec {
            Some(b"deflate") => {
                use miniz_oxide::inflate::{decompress_to_vec_with_limit, TINFLStatus};
                match decompress_to_vec_with_limit(data, limit) {
                    Ok(_) => {}
                    Err(e) if e.status == TINFLStatus::HasMoreOutput => return Err(too_big()),
                    Err(_) => return Err(bad("a deflate block does not inflate")),
                }
            }
            Some(b"snappy") => {
                // The block ends in a CRC-32 of the inflated bytes.
                let body = data.get(..data.len().saturating_sub(4)).unwrap_or_default();
                let n = snap::raw::decompress_len(body)
                    .map_err(|_| bad("a snappy block has no length"))?;
                if n > limit {
                    return Err(too_big());
                }
            }
            Some(b"zstandard") => {
                use std::io::Read as _;
                let decoder = zstd::stream::read::Decoder::new(data)
                    .map_err(|_| bad("a zstandard block does not decode"))?;
                let n = std::io::copy(&mut decoder.take(limit as u64 + 1), &mut std::io::sink())
                    .map_err(|_| bad("a zstandard block does not decode"))?;
                if n > limit as u64 {
                    return Err(too_big());
                }
            }
            // The block is its bytes; other codecs apache-avro refuses by name.
            _ => {}
        }
    }
    Ok(())
}

/// The key-value metadata of the Avro container `bytes` (its `avro.schema`, `avro.codec` and
/// the Iceberg keys), in the file's order, as raw bytes; `None` when the header is malformed.
/// A rewrite keeps them byte for byte: apache-avro, writing a schema it parsed, drops
/// attributes of logical types (`adjust-to-utc` on a timestamp) that Iceberg readers use.
pub(super) fn header(bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut r = Bytes { b: bytes, pos: 0 };
    if r.take(4)? != b"Obj\x01".as_slice() {
        return None;
    }
    let mut meta = Vec::new();
    loop {
        let count = r.long()?;
        if count == 0 {
            return Some(meta);
        }
        if count < 0 {
            r.long()?;
        }
        for _ in 0..count.unsigned_abs() {
            let key = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            meta.push((key, r.bytes()?.to_vec()));
        }
    }
}

/// Bytes of records in one block of a file written here (Java writes blocks of about this
/// size; a reader's bound on one block, [`MAX_BLOCK`], stays far away).
const BLOCK_BYTES: usize = 1 << 20;

/// An Avro container file: the metadata `meta` (in order, `avro.schema` and `avro.codec`
/// among them), a fresh sync marker, and the `records` (each already encoded) in blocks of
/// about [`BLOCK_BYTES`], compressed as `avro.codec` says (`null`, `deflate` or `zstandard`;
/// `Err` names another).
pub(super) fn write(meta: &[(String, Vec<u8>)], records: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let codec = meta
        .iter()
        .find(|(k, _)| k == "avro.codec")
        .map(|(_, v)| v.as_slice())
        .unwrap_or(b"null");
    let compress = |data: &[u8]| -> Result<Vec<u8>, String> {
        match codec {
            b"null" => Ok(data.to_vec()),
            b"deflate" => Ok(miniz_oxide::deflate::compress_to_vec(data, 6)),
            b"zstandard" => zstd::encode_all(data, 0).map_err(|e| e.to_string()),
            other => Err(format!(
                "Avro codec `{}` is not written here",
                String::from_utf8_lossy(other)
            )),
        }
    };
    let sync = uuid::Uuid::new_v4().into_bytes();
    let mut out = b"Obj\x01".to_vec();
    put_long(&mut out, meta.len() as i64);
    for (k, v) in meta {
        put_bytes(&mut out, k.as_bytes());
        put_bytes(&mut out, v);
    }
    put_long(&mut out, 0);
    out.extend_from_slice(&sync);
    let mut rest = records;
    while !rest.is_empty() {
        let (mut n, mut len) = (0, 0);
        while n < rest.len() && (n == 0 || len + rest[n].len() <= BLOCK_BYTES) {
            len += rest[n].len();
            n += 1;
        }
        let data: Vec<u8> = rest[..n].concat();
        put_long(&mut out, n as i64);
        put_bytes(&mut out, &compress(&data)?);
        out.extend_from_slice(&sync);
        rest = &rest[n..];
    }
    if records.is_empty() {
        compress(&[])?;
    }
    Ok(out)
}

/// A zig-zag varint `long`.
fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let byte = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// A cursor over Avro's binary encoding.
struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// A zig-zag varint `long`.
    fn long(&mut self) -> Option<i64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self.take(1)?.first()?;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        None
    }

    /// Length-prefixed bytes.
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.long()?).ok()?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::{types::Record, Codec, DeflateSettings, Schema, Writer};

    fn cx() -> Context {
        Context {
            table: "t".to_string(),
        }
    }

    /// An Avro file of one record holding `n` zero bytes, written with `codec`.
    fn file_of(n: usize, codec: Codec) -> Vec<u8> {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [{"name": "b", "type": "bytes"}]}"#,
        )
        .unwrap();
        let mut w = Writer::with_codec(&schema, Vec::new(), codec);
        let mut rec = Record::new(&schema).unwrap();
        rec.put("b", vec![0u8; n]);
        w.append(rec).unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn blocks_that_inflate_past_the_bound_are_refused_before_decoding() {
        let deflate = Codec::Deflate(DeflateSettings::default());
        for codec in [
            Codec::Null,
            deflate,
            Codec::Snappy,
            Codec::Zstandard(Default::default()),
        ] {
            let small = file_of(1000, codec);
            check(&small, &cx(), "m.avro", 1 << 20).unwrap();
            let big = file_of(2 << 20, codec);
            let e = check(&big, &cx(), "m.avro", 1 << 20);
            if matches!(codec, Codec::Null) {
                // Uncompressed blocks are no bigger than the file already read.
                assert!(e.is_ok());
            } else {
                let msg = e.unwrap_err().to_string();
                assert!(msg.contains("inflates to more than"), "{codec:?}: {msg}");
            }
        }
    }

    #[test]
    fn a_malformed_container_is_an_error_not_a_panic() {
        let good = file_of(100, Codec::Deflate(DeflateSettings::default()));
        for cut in 0..good.len() {
            let _ = check(&good[..cut], &cx(), "m.avro", 1 << 20);
        }
        let mut bad = good.clone();
        for i in 0..bad.len() {
            bad[i] ^= 0xff;
            let _ = check(&bad, &cx(), "m.avro", 1 << 20);
            bad[i] ^= 0xff;
        }
        assert!(check(b"nope", &cx(), "m.avro", 1 << 20).is_err());
    }

    #[test]
    fn a_file_written_again_keeps_its_metadata_and_reads_back() {
        // The process-wide bound is set by its first use: this test's reads must not set a
        // looser one before the hostile-file tests run.
        apache_avro::util::max_allocation_bytes(super::super::manifest::AVRO_MAX_ALLOCATION);
        for codec in [
            Codec::Null,
            Codec::Deflate(DeflateSettings::default()),
            Codec::Zstandard(Default::default()),
        ] {
            let schema = Schema::parse_str(
                r#"{"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}]}"#,
            )
            .unwrap();
            let mut w = Writer::with_codec(&schema, Vec::new(), codec);
            w.add_user_metadata("iceberg-key".into(), "v").unwrap();
            let mut data = Vec::new();
            for n in [1i64, -2, 300] {
                let mut rec = Record::new(&schema).unwrap();
                rec.put("n", n);
                w.append(rec.clone()).unwrap();
                data.push(apache_avro::to_avro_datum(&schema, rec).unwrap());
            }
            let original = w.into_inner().unwrap();
            let meta = header(&original).unwrap();
            assert!(meta.iter().any(|(k, v)| k == "iceberg-key" && v == b"v"));
            let again = write(&meta, &data).unwrap();
            check(&again, &cx(), "m.avro", 1 << 20).unwrap();
            assert_eq!(header(&again).unwrap(), meta);
            let read: Vec<_> = apache_avro::Reader::new(&again[..])
                .unwrap()
                .map(|v| v.unwrap())
                .collect();
            let want: Vec<_> = apache_avro::Reader::new(&original[..])
                .unwrap()
                .map(|v| v.unwrap())
                .collect();
            assert_eq!(read, want, "{codec:?}");
        }
        assert!(header(b"Obj\x01").is_none());
    }

    #[test]
    fn many_records_go_in_several_blocks_that_read_back() {
        apache_avro::util::max_allocation_bytes(super::super::manifest::AVRO_MAX_ALLOCATION);
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [{"name": "b", "type": "bytes"}]}"#,
        )
        .unwrap();
        let w = Writer::with_codec(
            &schema,
            Vec::new(),
            Codec::Deflate(DeflateSettings::default()),
        );
        let meta = header(&w.into_inner().unwrap()).unwrap();
        let records: Vec<Vec<u8>> = (0..40u8)
            .map(|i| {
                let mut rec = Record::new(&schema).unwrap();
                rec.put("b", vec![i; 100_000]);
                apache_avro::to_avro_datum(&schema, rec).unwrap()
            })
            .collect();
        let bytes = write(&meta, &records).unwrap();
        check(&bytes, &cx(), "m.avro", 2 << 20).unwrap();
        let read: Vec<_> = apache_avro::Reader::new(&bytes[..])
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let n = read.len();
        assert_eq!(n, 40);
    }
}
