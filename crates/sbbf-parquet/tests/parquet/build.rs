//! Building filters: from stored values and from Arrow arrays, our bitsets are byte-identical
//! to the ones pyarrow, arrow-rs, DuckDB and parquet-java wrote for the same chunks (built at
//! the size each writer chose; exact folding makes the size the only free choice).

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::file::serialized_reader::SerializedFileReader;
use sbbf_parquet::values::arrow::for_each_arrow_value;
use sbbf_parquet::write::build::{chunk_hashes, for_each_chunk_hash};
use sbbf_parquet::{IoPolicy, ParquetFile};
use sbbf_testkit::corpus_files as files;

#[test]
fn filters_built_from_stored_values_and_from_arrow_match_every_writer() {
    let (mut from_values, mut from_arrow) = (0, 0);
    for path in files() {
        let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        let data = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let schema = pq.metadata().file_metadata().schema_descr_ptr();
        for (c, ty) in pq.columns().to_vec().iter().enumerate() {
            if ty.physical == parquet::basic::Type::BOOLEAN {
                continue;
            }
            for (rg, stored) in pq
                .read_filters(c, IoPolicy::default())
                .into_iter()
                .enumerate()
            {
                let Ok(stored) = stored.map(|span| span.bitset) else {
                    continue;
                };
                let ctx = format!("{} rg {rg} `{}`", path.display(), ty.path);
                // From the chunk's decoded values.
                let (hashes, n) = chunk_hashes(&data, rg, c).unwrap();
                // The fast path (Arrow decoders where they round-trip) finds the same set.
                let mut fast = Vec::new();
                let fast_n = for_each_chunk_hash(
                    std::fs::File::open(&path).unwrap(),
                    pq.metadata(),
                    &data,
                    ty,
                    (rg, c),
                    |h| fast.push(h),
                )
                .unwrap();
                fast.sort_unstable();
                fast.dedup();
                assert_eq!((&fast, fast_n), (&hashes, n), "{ctx}: fast path");
                let mut ours = sbbf::Sbbf::from_bitset(&vec![0u8; stored.len()]).unwrap();
                ours.insert_hashes(&hashes);
                assert!(ours.as_bytes() == &stored[..], "{ctx}: from stored values");
                from_values += 1;

                // From Arrow arrays, for top-level columns.
                if ty.path.contains('.') {
                    continue;
                }
                let reader =
                    ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
                        .unwrap()
                        .with_row_groups(vec![rg])
                        .with_projection(ProjectionMask::leaves(&schema, [c]))
                        .build()
                        .unwrap();
                let mut arrow = sbbf::Sbbf::from_bitset(&vec![0u8; stored.len()]).unwrap();
                for batch in reader {
                    let batch = batch.unwrap();
                    for_each_arrow_value(batch.column(0).as_ref(), ty, |b| arrow.insert(b))
                        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                }
                assert!(
                    arrow.as_bytes() == &stored[..],
                    "{ctx}: from Arrow ({:?})",
                    ty.kind
                );
                from_arrow += 1;
            }
        }
    }
    eprintln!("{from_values} chunks rebuilt from values, {from_arrow} from Arrow arrays");
    assert!(from_values > 300 && from_arrow > 200);
}

#[test]
fn one_pass_filters_equal_filters_built_from_the_distinct_set() {
    use sbbf_parquet::write::build::chunk_filter;
    let mut checked = 0;
    for name in [
        "pa_ints.parquet",
        "duckdb_float_bytes.parquet",
        "spark_types.parquet",
        "pjava_types.parquet",
    ] {
        let path = sbbf_testkit::repo().join("testdata").join(name);
        let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        let data = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        for (c, ty) in pq.columns().iter().enumerate() {
            if ty.physical == parquet::basic::Type::BOOLEAN {
                continue;
            }
            for rg in 0..pq.metadata().num_row_groups() {
                let file = std::fs::File::open(&path).unwrap();
                let (f, estimate) =
                    chunk_filter(file, pq.metadata(), &data, ty, (rg, c), None, 0.01).unwrap();
                let (hashes, _) = chunk_hashes(&data, rg, c).unwrap();
                // Exact folding: the same bits as inserting the distinct set at the final size.
                let mut direct = sbbf::Sbbf::from_bitset(&vec![0u8; f.num_bytes()]).unwrap();
                direct.insert_hashes(&hashes);
                assert_eq!(f, direct, "{name} rg {rg} `{}`", ty.path);
                assert!(f.estimated_fpp() <= 0.01, "{name}: {}", f.estimated_fpp());
                // The size follows the real distinct count: never more than twice what the
                // accurate sizing of that count asks for.
                let sized = sbbf::Sbbf::with_ndv_fpp(hashes.len().max(1) as u64, 0.01).unwrap();
                assert!(
                    f.num_bytes() <= 2 * sized.num_bytes(),
                    "{name}: {} vs {}",
                    f.num_bytes(),
                    sized.num_bytes()
                );
                let exact = hashes.len() as f64;
                assert!(
                    (estimate as f64 - exact).abs() <= 0.1 * exact + 5.0,
                    "{estimate} vs {exact}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50);
}
