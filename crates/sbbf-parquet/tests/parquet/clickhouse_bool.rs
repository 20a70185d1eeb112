//! BOOLEAN filters written by ClickHouse (`testdata/clickhouse/bool_filters.parquet`, see its
//! README): our probes answer as arrow-rs reads the same filters (`Sbbf::check(&bool)`),
//! every value arrow reads back from a row group is "maybe" there, and `verify` checks those
//! chunks. Writing BOOLEAN filters stays refused.

use arrow::array::{Array, BooleanArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use sbbf_parquet::values::text::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::{Answer, FilterState, IoPolicy, ParquetFile};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    sbbf_testkit::testdata().join("clickhouse/bool_filters.parquet")
}

const BOOLS: [&str; 4] = ["odd", "small", "nb", "always"];

/// arrow-rs' own reader of `path`, reading Bloom filters.
fn arrowrs_reader(path: &std::path::Path) -> SerializedFileReader<std::fs::File> {
    let props = ReaderProperties::builder()
        .set_read_bloom_filter(true)
        .build();
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(props)
        .build();
    SerializedFileReader::new_with_options(std::fs::File::open(path).unwrap(), options).unwrap()
}

/// arrow-rs' answers: per row group, for `false` and `true`, whether its filter may hold it.
fn arrowrs_answers(column: usize) -> Vec<[bool; 2]> {
    let r = arrowrs_reader(&fixture());
    (0..r.num_row_groups())
        .map(|rg| {
            let g = r.get_row_group(rg).unwrap();
            let f = g
                .get_column_bloom_filter(column)
                .expect("ClickHouse wrote a filter");
            [f.check(&false), f.check(&true)]
        })
        .collect()
}

/// The values arrow reads back, per row group: [false present, true present].
fn stored(column: usize) -> Vec<[bool; 2]> {
    let file = std::fs::File::open(fixture()).unwrap();
    let b = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let n = b.metadata().num_row_groups();
    (0..n)
        .map(|rg| {
            let file = std::fs::File::open(fixture()).unwrap();
            let r = ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .with_row_groups(vec![rg])
                .build()
                .unwrap();
            let mut seen = [false; 2];
            for batch in r {
                let batch = batch.unwrap();
                let a = batch
                    .column(column)
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .unwrap();
                for i in 0..a.len() {
                    if a.is_valid(i) {
                        seen[a.value(i) as usize] = true;
                    }
                }
            }
            seen
        })
        .collect()
}

#[test]
fn clickhouse_boolean_filters_answer_as_arrowrs_reads_them() {
    let pq = ParquetFile::open(std::fs::File::open(fixture()).unwrap()).unwrap();
    let (mut absent, mut compared) = (0, 0);
    for name in BOOLS {
        let c = pq.column_index(name).unwrap();
        let theirs = arrowrs_answers(c);
        let present = stored(c);
        for (input, texts) in [
            (InputMode::Typed, ["false", "true"]),
            (InputMode::Hex, ["00", "01"]),
        ] {
            let opts = EncodeOptions {
                input,
                ..EncodeOptions::default()
            };
            let values: Vec<_> = texts
                .iter()
                .map(|t| encode_text(&pq.columns()[c], t, opts).unwrap())
                .collect();
            let ours = pq.probe(c, &values, IoPolicy::default());
            assert_eq!(ours.len(), theirs.len());
            for (rg, a) in ours.iter().enumerate() {
                assert_eq!(a.filter, FilterState::Present, "{name} rg {rg}");
                for v in 0..2 {
                    let maybe = a.answers[v] == Answer::Maybe;
                    assert_eq!(maybe, theirs[rg][v], "{name} rg {rg} {}", texts[v]);
                    if present[rg][v] {
                        assert!(maybe, "{name} rg {rg}: a stored {} is absent", texts[v]);
                    }
                    absent += usize::from(!maybe);
                    compared += 1;
                }
            }
        }
    }
    // By how the file was made: `always` lacks false in 4 row groups, `small` lacks true in 3
    // (row groups 1-3): 7 absent per input mode, if the filters are exact for two values.
    assert_eq!((compared, absent), (64, 14));
}

#[test]
fn verify_checks_clickhouse_boolean_chunks() {
    let pq = ParquetFile::open(std::fs::File::open(fixture()).unwrap()).unwrap();
    let data = SerializedFileReader::new(std::fs::File::open(fixture()).unwrap()).unwrap();
    let reports = pq.verify(&data, &[], 0, |_, _| {}).unwrap();
    let bools: Vec<_> = reports
        .iter()
        .filter(|r| BOOLS.contains(&r.column.as_str()))
        .collect();
    assert_eq!(bools.len(), 16, "every BOOLEAN chunk is verified");
    for r in &bools {
        assert_eq!(r.false_negatives, 0, "{r:?}");
        assert_eq!(r.not_verified, None);
    }
    // Values decoded as written: 10 per chunk, 8 for `nb` (NULL where id % 5 = 0).
    let nb: u64 = bools
        .iter()
        .filter(|r| r.column == "nb")
        .map(|r| r.values)
        .sum();
    assert_eq!(nb, 32);
    let distinct: BTreeSet<(String, u64)> = bools
        .iter()
        .map(|r| (r.column.clone(), r.distinct))
        .collect();
    assert!(distinct.contains(&("always".into(), 1)), "{distinct:?}");
    assert!(distinct.contains(&("odd".into(), 2)), "{distinct:?}");
}

#[test]
fn boolean_filters_are_still_not_written() {
    let td = tempfile::tempdir().unwrap();
    let out = td.path().join("out.parquet");
    let opts = sbbf_parquet::write::AddOptions {
        columns: vec!["odd".into()],
        fpp: 0.01,
        ndv: None,
        replace: true,
    };
    let e = sbbf_parquet::write::add_filters(&fixture(), &out, &opts, &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("BOOLEAN"), "{e}");
    assert!(!out.exists());
    // Nor from Arrow arrays (the Python package's writer).
    let pq = ParquetFile::open(std::fs::File::open(fixture()).unwrap()).unwrap();
    let col = &pq.columns()[pq.column_index("odd").unwrap()];
    let a = BooleanArray::from(vec![true, false]);
    assert!(sbbf_parquet::write::build::arrow_hashes(&a, col).is_err());
}

/// parquet-java writes a 32-byte filter on BOOLEAN columns with no bit set
/// (`testdata/pjava_types.parquet`, column `flag`): read as one-byte values it would call every
/// stored value absent. Only writers known to fill them are read; this one answers unknown.
#[test]
fn parquet_java_boolean_filters_are_not_used() {
    let path = sbbf_testkit::testdata().join("pjava_types.parquet");
    let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
    let c = pq.column_index("flag").unwrap();
    let spans = pq.read_filters(c, IoPolicy::default());
    assert!(spans.iter().all(|s| s.is_err()), "not read as filters");
    let values: Vec<_> = ["true", "false"]
        .iter()
        .map(|t| encode_text(&pq.columns()[c], t, EncodeOptions::default()).unwrap())
        .collect();
    for rg in pq.probe(c, &values, IoPolicy::default()) {
        assert!(matches!(rg.filter, FilterState::Invalid(ref why) if why.contains("parquet-mr")));
        assert_eq!(rg.answers, vec![Answer::Unknown; 2]);
    }
    // What reading them anyway gives: arrow-rs' reader calls both stored values absent.
    let r = arrowrs_reader(&path);
    let f = r
        .get_row_group(0)
        .unwrap()
        .get_column_bloom_filter(c)
        .cloned();
    let f = f.expect("parquet-java wrote a filter");
    assert!(!f.check(&true) && !f.check(&false));
}

/// arrow-rs writes BOOLEAN filters too (one byte per value): read the same way.
#[test]
fn arrowrs_boolean_filters_answer_as_arrowrs_reads_them() {
    use arrow::array::{ArrayRef, RecordBatch};
    use std::sync::Arc;
    let td = tempfile::tempdir().unwrap();
    let path = td.path().join("b.parquet");
    // Row group 0: both values; 1: only true; 2: only false (and nulls).
    let vals: Vec<Option<bool>> = (0..30)
        .map(|i| match i / 10 {
            0 => Some(i % 2 == 0),
            1 => Some(true),
            _ => (i % 3 != 0).then_some(false),
        })
        .collect();
    let batch = RecordBatch::try_from_iter([("b", Arc::new(BooleanArray::from(vals)) as ArrayRef)])
        .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(10))
        .set_bloom_filter_enabled(true)
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();

    let theirs = arrowrs_reader(&path);
    let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
    let values: Vec<_> = ["false", "true"]
        .iter()
        .map(|t| encode_text(&pq.columns()[0], t, EncodeOptions::default()).unwrap())
        .collect();
    let ours = pq.probe(0, &values, IoPolicy::default());
    let want = [[true, true], [false, true], [true, false]];
    for (rg, (a, stored)) in ours.iter().zip(want).enumerate() {
        let f = theirs
            .get_row_group(rg)
            .unwrap()
            .get_column_bloom_filter(0)
            .expect("arrow-rs wrote a BOOLEAN filter")
            .clone();
        for (v, held) in stored.into_iter().enumerate() {
            let maybe = a.answers[v] == Answer::Maybe;
            assert_eq!(maybe, f.check(&(v == 1)), "rg {rg} value {v}");
            assert!(maybe || !held, "rg {rg}: a stored value is absent");
        }
    }
    // Stored values only: row group 1 lacks false, row group 2 lacks true.
    assert_eq!(ours[1].answers[0], Answer::Absent);
    assert_eq!(ours[2].answers[1], Answer::Absent);
}
