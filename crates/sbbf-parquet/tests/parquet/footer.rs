//! The footer copier keeps every byte of footers written by other implementations, and
//! changes exactly the filter locations it is asked to.

use parquet::file::metadata::ParquetMetaDataReader;
use sbbf_parquet::format::footer::{edit_filter_locations, FilterEdits};
use sbbf_testkit::corpus_files as parquet_files;

fn footer(file: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as usize;
    &file[file.len() - 8 - len..file.len() - 8]
}

#[test]
fn no_edits_keep_every_writers_footer() {
    let mut identical = 0;
    for p in parquet_files() {
        let file = std::fs::read(&p).unwrap();
        let f = footer(&file);
        let copy = edit_filter_locations(f, &FilterEdits::new()).unwrap();
        if copy == f {
            identical += 1;
        } else {
            // The thrift crate writes a field-id delta of 15 in the long form (arrow-rs uses
            // the short one): same values, other bytes. The decoded footers must be equal,
            // and copying again changes nothing.
            let a = ParquetMetaDataReader::decode_metadata(f).unwrap();
            let b = ParquetMetaDataReader::decode_metadata(&copy).unwrap();
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", p.display());
            assert_eq!(
                edit_filter_locations(&copy, &FilterEdits::new()).unwrap(),
                copy
            );
        }
    }
    assert!(
        identical > 20,
        "only {identical} footers copied byte for byte"
    );
}

#[test]
fn unknown_fields_survive() {
    // A footer with fields no Parquet version defines: FileMetaData field 99 (a string) and
    // ColumnMetaData field 30 (a list of i32), next to an edited filter location.
    let file = std::fs::read(sbbf_testkit::repo().join("testdata/pa_ints.parquet")).unwrap();
    let f = footer(&file).to_vec();
    // Append field 99 (long form: type 8 = binary, id 99 zigzag = 198 = 0xc6 0x01) before the
    // final stop byte of FileMetaData.
    let mut with_unknown = f[..f.len() - 1].to_vec();
    with_unknown.extend_from_slice(&[0x08, 0xc6, 0x01, 5, b'h', b'e', b'l', b'l', b'o', 0x00]);
    let mut edits = FilterEdits::new();
    edits.insert((0, 0), (123456, 789));
    let out = edit_filter_locations(&with_unknown, &edits).unwrap();
    assert!(
        out.windows(8)
            .any(|w| w == [0x08, 0xc6, 0x01, 5, b'h', b'e', b'l', b'l']),
        "unknown field lost"
    );
    let m = ParquetMetaDataReader::decode_metadata(&out).unwrap();
    assert_eq!(m.row_group(0).column(0).bloom_filter_offset(), Some(123456));
}

#[test]
fn edits_change_only_the_filter_locations() {
    for p in parquet_files() {
        let file = std::fs::read(&p).unwrap();
        let f = footer(&file);
        let before = ParquetMetaDataReader::decode_metadata(f).unwrap();
        let mut edits = FilterEdits::new();
        for r in 0..before.num_row_groups() {
            for c in 0..before.row_group(r).num_columns() {
                if (r + c) % 2 == 0 {
                    edits.insert((r, c), (1_000_000 + (r * 100 + c) as i64, 48 + c as i32));
                }
            }
        }
        let edited = edit_filter_locations(f, &edits).unwrap();
        let after = ParquetMetaDataReader::decode_metadata(&edited).unwrap();
        assert_eq!(
            before.file_metadata().created_by(),
            after.file_metadata().created_by()
        );
        assert_eq!(
            format!("{:?}", before.file_metadata()),
            format!("{:?}", after.file_metadata())
        );
        for r in 0..before.num_row_groups() {
            for c in 0..before.row_group(r).num_columns() {
                let (a, b) = (before.row_group(r).column(c), after.row_group(r).column(c));
                match edits.get(&(r, c)) {
                    Some((o, l)) => {
                        assert_eq!(b.bloom_filter_offset(), Some(*o));
                        assert_eq!(b.bloom_filter_length(), Some(*l));
                    }
                    None => {
                        assert_eq!(a.bloom_filter_offset(), b.bloom_filter_offset());
                        assert_eq!(a.bloom_filter_length(), b.bloom_filter_length());
                    }
                }
                // Everything else of the chunk is the same.
                let norm = |m: &parquet::file::metadata::ColumnChunkMetaData| {
                    m.clone()
                        .into_builder()
                        .set_bloom_filter_offset(None)
                        .set_bloom_filter_length(None)
                        .build()
                        .unwrap()
                };
                // Debug text, so that NaN statistics compare equal to themselves.
                assert_eq!(
                    format!("{:?}", norm(a)),
                    format!("{:?}", norm(b)),
                    "{} rg {r} col {c}",
                    p.display()
                );
            }
        }
    }
}

#[test]
fn hostile_footers_are_errors_not_panics() {
    let mut edits = FilterEdits::new();
    edits.insert((0, 0), (4, 40));
    for bytes in [
        vec![],
        vec![0x19, 0xff, 0xff, 0xff, 0xff, 0x0f],
        vec![0x1c; 5000],
        vec![0x49, 0xff, 0xff, 0xff, 0x7f, 0x1c, 0x00],
    ] {
        assert!(edit_filter_locations(&bytes, &edits).is_err());
    }
}
