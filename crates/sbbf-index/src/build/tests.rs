//! The build's unit test: groups written a few blocks at a time (`CHUNK_BYTES` is tiny under
//! test) still hold every file's filter byte for byte.

use super::*;
use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use sbbf_parquet::IoPolicy;
use sbbf_parquet::ParquetFile;

fn write(path: &std::path::Path, base: i64, rows: i64, ndv: u64) {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from_iter_values(base..base + rows))],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(50))
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_max_ndv(ndv)
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Written in chunks of a few blocks, every entry is still its file's filter, byte for
/// byte, as the files' own reader reads it.
#[tokio::test(flavor = "multi_thread")]
async fn entries_are_the_files_filters() {
    let td = tempfile::tempdir().unwrap();
    for k in 0..7 {
        let p = td.path().join(format!("f{k}.parquet"));
        write(&p, k * 1000, 120 + k * 10, [40, 300, 3000][k as usize % 3]);
    }
    sbbf_testkit::settle(td.path());
    let root = Root::open(td.path().to_str().unwrap()).unwrap().unwrap();
    let r = build(&root, &BuildOptions::default()).await.unwrap();
    assert_eq!(r.files_read, 7);
    let (loaded, all) = root.load_whole().await.unwrap().unwrap();
    let d = loaded.directory;
    let col = &d.columns[0];
    assert!(col.groups.len() >= 2);
    let mut seen = 0;
    for g in &col.groups {
        for (e, entry) in g.entries.iter().enumerate() {
            let f = &d.files[entry.file as usize];
            let pq =
                ParquetFile::open(std::fs::File::open(td.path().join(&f.path)).unwrap()).unwrap();
            let spans = pq.read_filters(0, IoPolicy::default());
            let span = spans[entry.row_group as usize].as_ref().unwrap();
            assert_eq!(
                extract(&all, g, e),
                span.bitset.to_vec(),
                "{} rg {}",
                f.path,
                entry.row_group
            );
            assert_eq!(entry.folds, 0);
            seen += 1;
        }
    }
    let rgs: usize = d
        .files
        .iter()
        .map(|f| f.row_counts.as_ref().unwrap().len())
        .sum();
    assert_eq!(seen, rgs);
}
