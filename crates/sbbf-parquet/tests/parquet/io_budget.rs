//! The probe reads the footer and the filter bytes it needs, nothing else: counted through a
//! reader that records every byte handed out.

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::{ParquetMetaDataReader, ParquetMetaDataWriter};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{ChunkReader, Length};
use sbbf_parquet::format::header::BloomFilterHeader;
use sbbf_parquet::values::text::{encode_text, EncodeOptions};
use sbbf_parquet::{Answer, IoPolicy, ParquetFile};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Hands out bytes of an in-memory file and counts them, and the requests.
struct Counting {
    data: Bytes,
    bytes: AtomicU64,
    requests: AtomicU64,
}

impl Counting {
    fn new(data: Bytes) -> Self {
        Counting {
            data,
            bytes: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        }
    }
    fn reset(&self) {
        self.bytes.store(0, Ordering::SeqCst);
        self.requests.store(0, Ordering::SeqCst);
    }
}

impl Length for Counting {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

impl ChunkReader for Counting {
    type T = std::io::Cursor<Bytes>;
    fn get_read(&self, _start: u64) -> parquet::errors::Result<Self::T> {
        panic!("the probe must use ranged reads only")
    }
    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.bytes.fetch_add(length as u64, Ordering::SeqCst);
        self.requests.fetch_add(1, Ordering::SeqCst);
        let end = (start as usize + length).min(self.data.len());
        Ok(self.data.slice(start as usize..end))
    }
}

/// Writes `row_groups` row groups of `rows` rows (columns `id` i64 and `name` string) with
/// arrow-rs, then appends filters of `filter_bytes` for every chunk of both columns and a new
/// footer pointing at them (with or without `bloom_filter_length`).
fn file_with_big_filters(
    row_groups: usize,
    rows: usize,
    filter_bytes: usize,
    with_length: bool,
    filtered: &[usize],
) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows))
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
    for rg in 0..row_groups {
        let ids: Vec<i64> = (0..rows as i64)
            .map(|i| rg as i64 * 1_000_000 + i)
            .collect();
        let names: Vec<String> = ids.iter().map(|i| format!("name-{i}")).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();

    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(buf.clone()))
        .unwrap();
    let footer_len =
        u32::from_le_bytes(buf[buf.len() - 8..buf.len() - 4].try_into().unwrap()) as usize;
    buf.truncate(buf.len() - 8 - footer_len);
    let mut builder = meta.clone().into_builder();
    let row_groups_meta = builder.take_row_groups();
    let mut new_rgs = Vec::new();
    for (r, rg) in row_groups_meta.into_iter().enumerate() {
        let mut rgb = rg.clone().into_builder();
        let cols = rgb.take_columns();
        let mut new_cols = Vec::new();
        for (c, col) in cols.into_iter().enumerate() {
            if !filtered.contains(&c) {
                new_cols.push(col);
                continue;
            }
            let mut f = sbbf::Sbbf::with_num_bytes(filter_bytes);
            for i in 0..rows as i64 {
                let id = r as i64 * 1_000_000 + i;
                if c == 0 {
                    f.insert(&id.to_le_bytes());
                } else {
                    f.insert(format!("name-{id}").as_bytes());
                }
            }
            let header = BloomFilterHeader {
                num_bytes: f.num_bytes() as i32,
            }
            .to_bytes();
            let offset = buf.len() as i64;
            buf.extend_from_slice(&header);
            buf.extend_from_slice(f.as_bytes());
            let length = with_length.then_some((header.len() + f.num_bytes()) as i32);
            new_cols.push(
                col.into_builder()
                    .set_bloom_filter_offset(Some(offset))
                    .set_bloom_filter_length(length)
                    .build()
                    .unwrap(),
            );
        }
        new_rgs.push(rgb.set_column_metadata(new_cols).build().unwrap());
    }
    let new_meta = builder.set_row_groups(new_rgs).build();
    let mut footer = Vec::new();
    ParquetMetaDataWriter::new(&mut footer, &new_meta)
        .finish()
        .unwrap();
    buf.extend_from_slice(&footer);
    buf
}

fn footer_bytes(file: &[u8]) -> u64 {
    u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as u64 + 8
}

#[test]
fn sixty_four_row_groups_with_512_kib_filters_cost_the_footer_plus_a_few_kib() {
    for with_length in [true, false] {
        let file = file_with_big_filters(64, 20, 512 * 1024, with_length, &[0, 1]);
        assert!(file.len() > 64 * 2 * 512 * 1024);
        let reader = Counting::new(Bytes::from(file.clone()));
        let pq = ParquetFile::open(reader).unwrap();
        let footer = footer_bytes(&file);
        assert_eq!(pq.reader().bytes.load(Ordering::SeqCst), footer);
        // The file's own count agrees with the reader's: two waves of one read each.
        let opened = pq.io_stats();
        assert_eq!(
            (opened.requests, opened.bytes, opened.waves),
            (2, footer, 2)
        );

        pq.reader().reset();
        let col = pq.column_index("id").unwrap();
        let present = encode_text(&pq.columns()[col], "5000007", EncodeOptions::default()).unwrap();
        let answers = pq.probe(col, &[present], IoPolicy::default());
        let read = pq.reader().bytes.load(Ordering::SeqCst);
        eprintln!(
            "with_length={with_length}: probe read {read} bytes in {} requests",
            pq.reader().requests.load(Ordering::SeqCst)
        );
        assert!(read < 8 * 1024, "probe read {read} bytes");
        // What the library reports is what the reader saw; header and block in one wave when
        // the length is known, a header wave first without it.
        let s = pq.io_stats();
        assert_eq!(s.bytes - opened.bytes, read);
        assert_eq!(
            s.requests - opened.requests,
            pq.reader().requests.load(Ordering::SeqCst)
        );
        assert_eq!(s.waves - opened.waves, if with_length { 1 } else { 2 });
        assert_eq!(answers[5].answers[0], Answer::Maybe);
        let skipped = answers
            .iter()
            .filter(|a| a.answers[0] == Answer::Absent)
            .count();
        assert!(skipped >= 60, "only {skipped} row groups skipped");
    }
}

#[test]
fn small_filters_are_read_whole_and_coalesced() {
    // 8 row groups, 1 KiB filters on `name` written one after another: probing reads them all
    // in one request.
    let file = file_with_big_filters(8, 50, 1024, true, &[1]);
    let reader = Counting::new(Bytes::from(file.clone()));
    let pq = ParquetFile::open(reader).unwrap();
    pq.reader().reset();
    let col = pq.column_index("name").unwrap();
    let v = encode_text(&pq.columns()[col], "name-3000010", EncodeOptions::default()).unwrap();
    let answers = pq.probe(col, &[v], IoPolicy::default());
    assert_eq!(answers[3].answers[0], Answer::Maybe);
    assert_eq!(pq.reader().requests.load(Ordering::SeqCst), 1);
    // Exactly the filters, never column data.
    assert_eq!(pq.reader().bytes.load(Ordering::SeqCst), 8 * (1024 + 16));
}

#[test]
fn answers_do_not_depend_on_the_read_strategy() {
    let file = file_with_big_filters(4, 100, 64 * 1024, false, &[0, 1]);
    let pq = ParquetFile::open(Bytes::from(file)).unwrap();
    let col = pq.column_index("id").unwrap();
    let values: Vec<_> = (0..300)
        .map(|i| {
            encode_text(
                &pq.columns()[col],
                &(i * 7919 % 3_000_100).to_string(),
                EncodeOptions::default(),
            )
            .unwrap()
        })
        .collect();
    let blocks = pq.probe(
        col,
        &values,
        IoPolicy {
            request_cost: 1,
            max_gap: 0,
        },
    );
    let whole = pq.probe(
        col,
        &values,
        IoPolicy {
            request_cost: u64::MAX / 1024,
            max_gap: 1 << 30,
        },
    );
    assert_eq!(blocks, whole);
}

#[test]
fn encrypted_and_broken_footers_are_clear_errors() {
    use sbbf_parquet::Error;
    let mut encrypted = b"PAR1".to_vec();
    encrypted.extend_from_slice(&[0u8; 100]);
    encrypted.extend_from_slice(&100u32.to_le_bytes());
    encrypted.extend_from_slice(b"PARE");
    assert!(matches!(
        ParquetFile::open(Bytes::from(encrypted)),
        Err(Error::Encrypted)
    ));
    assert!(matches!(
        ParquetFile::open(Bytes::from_static(b"PAR1")),
        Err(Error::NotParquet(_))
    ));
    let mut huge = b"PAR1".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    huge.extend_from_slice(b"PAR1");
    let e = ParquetFile::open(Bytes::from(huge)).err().unwrap();
    assert!(e.to_string().contains("exceeds the file size"), "{e}");
    let mut garbage = b"PAR1".to_vec();
    garbage.extend_from_slice(&[0xffu8; 64]);
    garbage.extend_from_slice(&64u32.to_le_bytes());
    garbage.extend_from_slice(b"PAR1");
    assert!(matches!(
        ParquetFile::open(Bytes::from(garbage)),
        Err(Error::Footer(_))
    ));
}
