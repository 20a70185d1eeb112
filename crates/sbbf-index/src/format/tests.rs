//! The index format's unit tests: directories round-trip, paths are front-coded, hostile
//! bytes are refused.

use super::write::put_section;
use super::*;
use crate::IndexError;
use parquet::basic::Type as PhysicalType;
use sbbf_parquet::format::column::{ColumnType, ValueKind};

fn sample() -> Directory {
    Directory {
        created_ms: 5,
        root: "t/".into(),
        target_fpp: Some(0.01),
        explicit_columns: false,
        files: vec![
            FileEntry {
                path: "a.parquet".into(),
                size: 100,
                stamp: Stamp::Local {
                    ino: 1 << 40,
                    mtime_ns: -3,
                    ctime_ns: 1_700_000_000_123_456_789,
                },
                row_counts: Some(vec![10, 20]),
                schema: Some(77),
            },
            FileEntry {
                path: "b.parquet".into(),
                size: 7,
                stamp: Stamp::Object {
                    last_modified_ms: 9,
                    etag: Some(sbbf::hash(b"\"x\"")),
                },
                row_counts: None,
                schema: None,
            },
        ],
        types: vec![ColumnType {
            path: "id".into(),
            physical: PhysicalType::INT64,
            type_length: -1,
            kind: ValueKind::Decimal {
                precision: 18,
                scale: 2,
            },
            logical: Some("DECIMAL(18,2)".into()),
        }],
        columns: vec![ColumnEntry {
            path: "id".into(),
            file_types: vec![Some(0), None],
            groups: vec![Group {
                blocks: 2,
                entries: vec![Entry {
                    file: 0,
                    row_group: 1,
                    folds: 1,
                    fpp: 0.5,
                }],
                offset: 16,
                len: 72,
                crc: 3,
            }],
        }],
        table: None,
    }
}

/// The sample's index bytes from offset 0 (header, a zeroed group section, directory) and
/// where the head starts.
fn index_of(d: &Directory) -> (Vec<u8>, u64) {
    let mut all = header();
    all.resize(88, 0);
    let (dir, head) = encode_directory(d, 88);
    all.extend_from_slice(&dir);
    (all, 88 + head as u64)
}

fn decode(all: &[u8], head_at: u64) -> Result<Directory, IndexError> {
    let head = parse_head(all.get(head_at as usize..).unwrap_or_default(), head_at)?;
    parse_directory(all, 0, &head)
}

#[test]
fn directory_round_trip() {
    let d = sample();
    let (all, head_at) = index_of(&d);
    assert_eq!(decode(&all, head_at).unwrap(), d);
    let h = head_at as usize;
    // Every truncation of the head is an error, never a panic.
    for n in h..all.len() {
        assert!(parse_head(&all[h..n], head_at).is_err());
    }
    // Every single-byte change either fails or decodes; it never panics. Changes in the
    // file table and column sections fail their checksums.
    for k in 88..all.len() {
        let mut b = all.clone();
        b[k] ^= 0xff;
        let r = decode(&b, head_at);
        assert!(k >= h || r.is_err(), "a change at {k} went unseen");
    }
    // The sections must lie before the head.
    assert!(parse_head(&all[h..], 100).is_err());
}

/// Format 4 records the table version last, format 5 the table's column names and commit
/// mark after it, format 6 then an Iceberg snapshot's metadata file and manifest list;
/// format 3, 4 and 5 heads (without them) still read.
#[test]
fn the_table_version_round_trips_and_older_heads_still_read() {
    let mut d = sample();
    d.table = Some(TableAt {
        format: "delta".into(),
        version: 7,
        names: Some(r#"{"format":"delta","columns":[]}"#.into()),
        mark: Some(sbbf_lake::since::CommitMark {
            size: 812,
            etag: "\"5d-1f\"".into(),
        }),
        manifests: Some(vec!["s3://b/t/metadata/m0.avro".into(), "m1.avro".into()]),
        metadata: Some("s3://b/t/metadata/00003-9c.metadata.json".into()),
        list: Some("s3://b/t/metadata/snap-1-0-9c.avro".into()),
    });
    let (all, head_at) = index_of(&d);
    assert_eq!(decode(&all, head_at).unwrap(), d);
    // Without names, mark, manifests, metadata file or list: five bytes (an empty name
    // text, no mark, no manifests, two empty texts).
    let mut bare = d.clone();
    let t = bare.table.as_mut().unwrap();
    (t.names, t.mark, t.manifests) = (None, None, None);
    (t.metadata, t.list) = (None, None);
    t.format = "iceberg".into();
    t.version = 4_874_900_129_013_685_351;
    let (all, head_at) = index_of(&bare);
    assert_eq!(decode(&all, head_at).unwrap(), bare);
    // A format 5 head is that head without the last two bytes, a format 4 head without the
    // last five.
    let v5 = &all[head_at as usize..all.len() - 2];
    assert_eq!(parse_head_of(v5, head_at, 5).unwrap().table, bare.table);
    assert!(parse_head_of(v5, head_at, 6).is_err());
    let v4 = &all[head_at as usize..all.len() - 5];
    let head = parse_head_of(v4, head_at, 4).unwrap();
    assert_eq!(head.table, bare.table);
    assert!(parse_head_of(v4, head_at, 5).is_err());
    let (v3, v3_head_at) = index_of(&sample());
    assert_eq!(decode(&v3, v3_head_at).unwrap().table, None);
    // An unknown format name is damage, not a guess.
    let mut bad = d.clone();
    bad.table.as_mut().unwrap().format = "hudi".into();
    let (all, head_at) = index_of(&bad);
    assert!(decode(&all, head_at).is_err());
}

/// Paths sharing prefixes (and not) come back from the front coding as they were.
#[test]
fn front_coded_paths() {
    let mut d = sample();
    let names = [
        "",
        "a",
        "a/b=1/x.parquet",
        "a/b=1/y.parquet",
        "a/b=2/\u{e9}.parquet",
        "b",
    ];
    d.files = names
        .iter()
        .map(|p| FileEntry {
            path: p.to_string(),
            size: 1,
            stamp: Stamp::Local {
                ino: 0,
                mtime_ns: 0,
                ctime_ns: 0,
            },
            row_counts: Some(vec![1, 2]),
            schema: Some(p.len() as u64 % 2),
        })
        .collect();
    d.columns[0].file_types = vec![Some(0); names.len()];
    let (all, head_at) = index_of(&d);
    assert_eq!(decode(&all, head_at).unwrap().files, d.files);
}

/// Random sections (and random edits of real ones) never panic and never allocate what a
/// count claims: they decode or fail.
#[test]
fn hostile_directories() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let d = sample();
    let (all, head_at) = index_of(&d);
    let head = parse_head(&all[head_at as usize..], head_at).unwrap();
    let files = d.files.clone();
    let part = |s: &Section| all[s.offset as usize..(s.offset + s.len) as usize].to_vec();
    let good = [
        all[head_at as usize..].to_vec(),
        part(&head.files),
        part(&head.columns[0].section),
    ];
    for _ in 0..20_000 {
        let n = (next() % 200) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        let _ = parse_head(&bytes, 1 << 40);
        let _ = parse_files(&bytes, &head);
        let _ = parse_column(&bytes, &head.columns[0], &files);
        for (k, g) in good.iter().enumerate() {
            let mut b = g.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % b.len();
                b[at] = next() as u8;
            }
            let _ = match k {
                0 => parse_head(&b, 1 << 40).map(|_| ()),
                1 => parse_files(&b, &head).map(|_| ()),
                _ => parse_column(&b, &head.columns[0], &files).map(|_| ()),
            };
        }
    }
    // A count of files that claims more than the file table can hold is refused before
    // allocating.
    let mut b = Out::default();
    b.var(0);
    b.str("");
    b.u8(0);
    b.u8(0);
    b.var(u64::MAX >> 1);
    put_section(
        &mut b,
        &Section {
            offset: 16,
            len: 60,
            crc: 0,
        },
    );
    assert!(matches!(
        parse_head(&b.0, 1 << 40),
        Err(IndexError::Damaged(_))
    ));
}

#[test]
fn trailer_checks() {
    let t = trailer(100, 20, 7);
    assert_eq!(
        parse_trailer(&t, 160).unwrap(),
        Trailer {
            dir_offset: 100,
            dir_len: 20,
            dir_crc: 7,
            version: VERSION,
        }
    );
    assert!(matches!(
        parse_trailer(&t, 159),
        Err(IndexError::Damaged(_))
    ));
    let mut f = t.clone();
    f[39] = b'x';
    assert!(matches!(parse_trailer(&f, 160), Err(IndexError::Foreign)));
    assert!(parse_trailer(&t[..10], 160).is_err());
}
