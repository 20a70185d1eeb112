//! Remote files through object_store against a real S3-compatible server (moto, started on a
//! loopback port by each test): remote answers equal local ones, listing finds every file,
//! and pruning one value of a 64-row-group file costs the footer plus one coalesced read.
//!
//! Needs `tools/.venv/bin/moto_server` (`bash tools/setup/setup-s3-test.sh`); fails without it.

use sbbf_testkit::moto;
use sbbf_testkit::{conformance_expected, conformance_files};

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use flate2::read::GzDecoder;
use futures::stream::BoxStream;
use futures::StreamExt as _;
use futures::TryStreamExt;
use moto::Moto;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder};
use parquet::file::properties::{BloomFilterPosition, WriterProperties};
use parquet::schema::types::ColumnPath;
use sbbf_parquet::prune::Predicate;
use sbbf_parquet::read::async_driver::REMOTE_POLICY;
use sbbf_parquet::source::object::object_store::path::Path;
use sbbf_parquet::source::object::object_store::{
    self, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use sbbf_parquet::source::object::{self, ObjectReader};
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::Encoded;
use sbbf_parquet::Literal;
use sbbf_parquet::{Answer, IoPolicy, ParquetFile};
use sbbf_testkit::repo;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const BUCKET: &str = "sbbf";

fn store(moto: &Moto, bucket: &str) -> Arc<dyn ObjectStore> {
    let options = [
        ("aws_access_key_id", moto::KEY.to_string()),
        ("aws_secret_access_key", moto::SECRET.to_string()),
        ("aws_region", moto::REGION.to_string()),
        ("aws_endpoint", moto.endpoint()),
        ("aws_allow_http", "true".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    object::store_from_url_opts(&format!("s3://{bucket}/"), options)
        .expect("store")
        .0
}

/// Up to `n` distinct values (as plain bytes) per column of a file, half present in the data
/// and half not, from the expected-answer files of the corpus.
fn sample_values(expected: &std::path::Path, n: usize) -> BTreeMap<String, Vec<Vec<u8>>> {
    // Per column: (present, absent) values.
    type Split = (Vec<Vec<u8>>, Vec<Vec<u8>>);
    let mut out: BTreeMap<String, Split> = BTreeMap::new();
    let Ok(f) = std::fs::File::open(expected) else {
        return BTreeMap::new();
    };
    for line in std::io::BufReader::new(GzDecoder::new(f)).lines() {
        let j: Json = serde_json::from_str(&line.unwrap()).unwrap();
        let Some(col) = j["column"].as_str() else {
            continue;
        };
        let bytes = unhex(j["plain_hex"].as_str().unwrap());
        let present = j["present_in_data"].as_bool().unwrap_or(false);
        let (p, a) = out.entry(col.to_string()).or_default();
        let side = if present { p } else { a };
        if side.len() < n / 2 && !side.contains(&bytes) {
            side.push(bytes);
        }
    }
    out.into_iter()
        .map(|(c, (mut p, a))| {
            p.extend(a);
            (c, p)
        })
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Every file of testdata/ and the conformance corpus, probed through S3 and locally, gives the
/// same answers for sampled values of every column with filters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_answers_equal_local() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let dirs = [
        (
            "testdata",
            repo().join("testdata"),
            repo().join("fixtures/expected"),
        ),
        ("conformance", conformance_files(), conformance_expected()),
    ];
    let store = store(&moto, BUCKET);
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    let mut files_checked = 0;
    for (prefix, dir, expected) in &dirs {
        let names = moto.upload_dir(BUCKET, prefix, dir);
        assert!(!names.is_empty(), "no files in {}", dir.display());
        // Listing finds exactly the uploaded files, in order.
        let listed = object::list_parquet(&store, &Path::from(*prefix))
            .await
            .unwrap();
        let listed_names: Vec<String> = listed
            .iter()
            .map(|m| m.location.filename().unwrap().to_string())
            .collect();
        assert_eq!(listed_names, names);
        // A single object is a source of its own, named by its URL.
        let url = format!("s3://{BUCKET}/{}", listed[0].location);
        let one = Source::open_store(
            &url,
            store.clone(),
            listed[0].location.clone(),
            SourceOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(one.names().collect::<Vec<_>>(), [url.as_str()]);
        assert!(!one.is_many());

        for meta in &listed {
            let name = meta.location.filename().unwrap();
            let local_path = dir.join(name);
            let stem = name.trim_end_matches(".parquet");
            let samples = sample_values(&expected.join(format!("{stem}.jsonl.gz")), 8);
            let local = ParquetFile::open(std::fs::File::open(&local_path).unwrap()).unwrap();
            let mut remote_pq = object::open(&store, &meta.location, meta.size)
                .await
                .unwrap();
            assert_eq!(
                remote_pq.metadata().num_row_groups(),
                local.metadata().num_row_groups()
            );
            for (col, ty) in local.columns().iter().enumerate() {
                // Sampled values, plus two arbitrary byte strings of the column's width.
                let width = ty.type_length.max(8) as usize;
                let mut values: Vec<Encoded> = samples
                    .get(&ty.path)
                    .into_iter()
                    .flatten()
                    .map(|b| Encoded::Candidates(vec![b.clone()]))
                    .collect();
                values.push(Encoded::Candidates(vec![vec![0xa5; width]]));
                values.push(Encoded::Candidates(vec![vec![0x17; width]]));
                let want = local.probe(col, &values, IoPolicy::default());
                let got = remote_pq.probe_async(col, &values, REMOTE_POLICY).await;
                assert_eq!(got, want, "{name} column {}", ty.path);
                for rg in &want {
                    for a in &rg.answers {
                        *tally.entry(a.as_str()).or_default() += 1;
                    }
                }
            }
            files_checked += 1;
        }

        // A column no file has: an error per file, one result per listed file.
        let source = Source::open_store(
            &format!("s3://{BUCKET}/{prefix}/"),
            store.clone(),
            Path::from(*prefix),
            SourceOptions::default(),
        )
        .await
        .unwrap();
        let results: Vec<_> = source
            .probe("__no_such_column__", |_| Ok(Vec::new()))
            .collect()
            .await;
        assert_eq!(results.len(), listed.len());
        assert!(
            results.iter().all(|(_, r)| r.is_err()),
            "unknown column is an error per file"
        );
    }
    println!("remote == local over {files_checked} files: answers {tally:?}");
    assert!(files_checked >= 30, "{files_checked} files");
    assert!(tally.get("maybe").copied().unwrap_or(0) > 100, "{tally:?}");
    assert!(tally.get("absent").copied().unwrap_or(0) > 100, "{tally:?}");
}

/// A source's probe and prune (concurrent) equal the local answers, in file order, and
/// never have more requests in flight than the concurrency asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_files_concurrently() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let dir = conformance_files();
    moto.upload_dir(BUCKET, "c", &dir);
    let counting = Arc::new(Counting::new(store(&moto, BUCKET)));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let files = object::list_parquet(&store, &Path::from("c"))
        .await
        .unwrap();
    let column = "i64";
    let values = ["0", "1", "-1234567", "42", "9223372036854775807"];
    let encode = move |ty: &sbbf_parquet::format::column::ColumnType| {
        values
            .iter()
            .map(|v| {
                sbbf_parquet::values::text::encode_text(ty, v, Default::default())
                    .map_err(sbbf_parquet::Error::from)
            })
            .collect::<Result<Vec<_>, _>>()
    };
    for concurrency in [1, 3, 8] {
        let source = || async {
            let options = SourceOptions {
                concurrency,
                ..SourceOptions::default()
            };
            Source::open_store("s3://b/c/", store.clone(), Path::from("c"), options)
                .await
                .unwrap()
        };
        counting.reset();
        let got: Vec<_> = source().await.probe(column, encode).collect().await;
        // The bound holds across files: never more requests in flight than asked for.
        let most = counting.max_in_flight.load(Ordering::SeqCst);
        assert!(
            most <= concurrency as u64,
            "{concurrency}: {}",
            counting.report()
        );
        if concurrency > 1 {
            assert!(most > 1, "{concurrency}: {}", counting.report());
        }
        let pred = Predicate::In(
            column.into(),
            vec![Literal::Int(-1234567), Literal::Int(42)],
        );
        let pruned: Vec<_> = source().await.prune(pred.clone()).collect().await;
        assert_eq!(got.len(), files.len());
        // In listing order, named by URL.
        for ((name, _), meta) in got.iter().zip(&files) {
            assert_eq!(name, &format!("s3://b/{}", meta.location));
        }
        let got: Vec<_> = got.into_iter().map(|(_, r)| r).collect();
        let pruned: Vec<_> = pruned.into_iter().map(|(_, r)| r).collect();
        let mut with_column = 0;
        for ((meta, r), p) in files.iter().zip(&got).zip(&pruned) {
            let local = ParquetFile::open(
                std::fs::File::open(dir.join(meta.location.filename().unwrap())).unwrap(),
            )
            .unwrap();
            match local.column_index(column) {
                Ok(col) => {
                    with_column += 1;
                    let enc = encode(&local.columns()[col]).unwrap();
                    let r = r.as_ref().unwrap();
                    assert_eq!(r.answers, local.probe(col, &enc, IoPolicy::default()));
                    assert_eq!(*r.encoded, enc[..]);
                    assert_eq!(p.as_ref().unwrap(), &local.prune(&pred).unwrap());
                }
                Err(_) => {
                    assert!(r.is_err() && p.is_err(), "{}", meta.location);
                }
            }
        }
        assert!(with_column >= 3, "{with_column} files have `{column}`");
    }
}

/// Counts the requests (and bytes) that reach the store: every GET goes through `get_opts`
/// (ranged reads, `HEAD`s), `get_ranges` is counted and then split into GETs as object_store
/// does by default (ranges closer than 1 MiB merged).
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn ObjectStore>,
    gets: AtomicU64,
    heads: AtomicU64,
    get_ranges_calls: AtomicU64,
    lists: AtomicU64,
    bytes: AtomicU64,
    /// GETs in flight now, and the most at once since the last reset.
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    log: std::sync::Mutex<Vec<String>>,
}

impl Counting {
    fn new(inner: Arc<dyn ObjectStore>) -> Counting {
        Counting {
            inner,
            gets: AtomicU64::new(0),
            heads: AtomicU64::new(0),
            get_ranges_calls: AtomicU64::new(0),
            lists: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
            log: Default::default(),
        }
    }
    fn requests(&self) -> u64 {
        self.gets.load(Ordering::SeqCst)
            + self.heads.load(Ordering::SeqCst)
            + self.lists.load(Ordering::SeqCst)
    }
    fn reset(&self) {
        for c in [
            &self.gets,
            &self.heads,
            &self.get_ranges_calls,
            &self.lists,
            &self.bytes,
            &self.max_in_flight,
        ] {
            c.store(0, Ordering::SeqCst);
        }
        self.log.lock().unwrap().clear();
    }
    fn report(&self) -> String {
        format!(
            "{} request(s) ({} GET, {} HEAD, {} LIST; {} get_ranges call(s)), {} bytes: {}",
            self.requests(),
            self.gets.load(Ordering::SeqCst),
            self.heads.load(Ordering::SeqCst),
            self.lists.load(Ordering::SeqCst),
            self.get_ranges_calls.load(Ordering::SeqCst),
            self.bytes.load(Ordering::SeqCst),
            self.log.lock().unwrap().join(", ")
        )
    }
}

impl std::fmt::Display for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Counting {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let asked = format!("{:?}", options.range);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let r = self.inner.get_opts(location, options).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let r = r?;
        if head {
            self.heads.fetch_add(1, Ordering::SeqCst);
            self.log.lock().unwrap().push("HEAD".into());
        } else {
            self.gets.fetch_add(1, Ordering::SeqCst);
            self.bytes
                .fetch_add(r.range.end - r.range.start, Ordering::SeqCst);
            self.log.lock().unwrap().push(format!(
                "GET {asked} -> {}..{} ({} B)",
                r.range.start,
                r.range.end,
                r.range.end - r.range.start
            ));
        }
        Ok(r)
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.get_ranges_calls.fetch_add(1, Ordering::SeqCst);
        // object_store's default: merge ranges closer than 1 MiB, fetch through `get_opts`.
        object_store::coalesce_ranges(
            ranges,
            |r| {
                use object_store::ObjectStoreExt;
                self.get_range(location, r)
            },
            object_store::OBJECT_STORE_COALESCE_DEFAULT,
        )
        .await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// Opening an object without its size: one suffix GET, no HEAD, one wave; a file smaller than
/// the suffix comes whole; a missing object is a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_without_a_head() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let counting = Arc::new(Counting::new(store(&moto, BUCKET)));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let big = write_64(BloomFilterPosition::End);
    let small =
        std::fs::read(sbbf_testkit::conformance_files().join("pyarrow_v2_zstd.parquet")).unwrap();
    assert!(small.len() < 64 * 1024 && big.len() > 64 * 1024);
    for (name, data) in [("big.parquet", big.to_vec()), ("small.parquet", small)] {
        moto.put(BUCKET, name, &data);
        let local = ParquetFile::open(Bytes::from(data.clone())).unwrap();
        counting.reset();
        let pq = object::open_unsized(&store, &Path::from(name))
            .await
            .unwrap();
        assert_eq!(
            counting.heads.load(Ordering::SeqCst),
            0,
            "{}",
            counting.report()
        );
        assert_eq!(
            counting.gets.load(Ordering::SeqCst),
            1,
            "{}",
            counting.report()
        );
        assert_eq!(pq.file_len(), data.len() as u64);
        assert_eq!(pq.footer_start(), local.footer_start());
        assert_eq!(pq.columns(), local.columns());
        let s = pq.io_stats();
        assert_eq!((s.requests, s.waves), (1, 1), "{s:?}");
    }
    let missing = object::open_unsized(&store, &Path::from("nope.parquet")).await;
    let e = missing.err().expect("a missing object is an error");
    assert!(
        matches!(
            &e,
            sbbf_parquet::Error::Read(sbbf_parquet::ReadError::Store {
                source: object_store::Error::NotFound { .. },
                ..
            })
        ),
        "{e:?}"
    );
}

/// A file whose filters lie within its last 64 KiB, just before its footer (arrow-rs with
/// `End`, as pyarrow, DuckDB and parquet-java write them): the footer's one read answers the
/// probe too, with the same answers as the whole file read locally. Filters after each row
/// group of a larger file are still read (one more wave).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_before_the_footer_cost_no_read_of_their_own() {
    let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let counting = Arc::new(Counting::new(inner));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let whole = write_64(BloomFilterPosition::End);
    let local = ParquetFile::open(whole.clone()).unwrap();
    // The last 64 KiB hold the footer and the filters of the last row groups.
    let tail_start = whole.len() as u64 - sbbf_parquet::read::async_driver::FOOTER_SUFFIX;
    let inside = local
        .filter_locations(0)
        .iter()
        .rposition(|l| l.offset.is_some_and(|o| o as u64 >= tail_start))
        .expect("some filter within the last 64 KiB");
    let path = Path::from("end.parquet");
    object_store::ObjectStoreExt::put(store.as_ref(), &path, PutPayload::from(whole.clone()))
        .await
        .unwrap();
    let mut pq = object::open(&store, &path, whole.len() as u64)
        .await
        .unwrap();
    counting.reset();
    let value: i64 = inside as i64 * 1_000_000 + 7 * 5;
    let pred = Predicate::eq("id", Literal::Int(value.into()));
    let local_rg = |rg: usize| {
        let l = local.filter_locations(0)[rg];
        l.offset.is_some_and(|o| o as u64 >= tail_start)
    };
    // Only the row groups whose filters are in the tail: no request at all.
    let wanted: Vec<bool> = (0..64).map(local_rg).collect();
    let prepared = sbbf_parquet::prune::PreparedPredicate::new(pred.clone());
    let pruned = pq
        .prune_prepared_among(&prepared, REMOTE_POLICY, &wanted)
        .await
        .unwrap();
    assert_eq!(counting.requests(), 0, "{}", counting.report());
    assert!(
        pruned.row_groups.contains(&inside),
        "{:?}",
        pruned.row_groups
    );
    assert_eq!(pq.io_stats().waves, 1, "{:?}", pq.io_stats());
}

/// arrow-rs's record batch reader over an `ObjectReader` (what `sbbf_lake::rows` reads a
/// table's rows with) reads a small file's footer in one request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arrow_read_takes_the_footer_in_one_request() {
    let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let counting = Arc::new(Counting::new(inner));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let whole = write_64(BloomFilterPosition::End);
    let path = Path::from("small.parquet");
    object_store::ObjectStoreExt::put(store.as_ref(), &path, PutPayload::from(whole.clone()))
        .await
        .unwrap();
    counting.reset();
    let reader = object::ObjectReader::new(Arc::clone(&store), path, whole.len() as u64);
    let builder = parquet::arrow::ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .unwrap();
    assert_eq!(builder.metadata().num_row_groups(), 64);
    assert_eq!(counting.requests(), 1, "{}", counting.report());
}

/// And a file smaller than that first read, footer and rows, in that one request: its pages
/// are served from the bytes the footer came in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_files_rows_take_one_request() {
    let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let counting = Arc::new(Counting::new(inner));
    let store: Arc<dyn ObjectStore> = counting.clone();
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), None).unwrap();
    let ids = Int64Array::from((0..500i64).collect::<Vec<_>>());
    w.write(&RecordBatch::try_new(schema, vec![Arc::new(ids)]).unwrap())
        .unwrap();
    w.close().unwrap();
    let path = Path::from("tiny.parquet");
    let len = out.len() as u64;
    assert!(
        len < sbbf_parquet::read::async_driver::FOOTER_SUFFIX,
        "{len}"
    );
    object_store::ObjectStoreExt::put(store.as_ref(), &path, PutPayload::from(out))
        .await
        .unwrap();
    counting.reset();
    let reader = object::ObjectReader::new(Arc::clone(&store), path, len);
    let batches: Vec<RecordBatch> = ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .unwrap()
        .build()
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 500);
    assert_eq!(counting.requests(), 1, "{}", counting.report());
}

/// 64 row groups of 2,000 rows (`id` i64 with a Bloom filter, `payload` text without), filters
/// where `position` puts them.
fn write_64(position: BloomFilterPosition) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("payload", DataType::Utf8, false),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2000))
        .set_column_bloom_filter_enabled(ColumnPath::from("id"), true)
        .set_column_bloom_filter_max_ndv(ColumnPath::from("id"), 2000)
        .set_column_bloom_filter_fpp(ColumnPath::from("id"), 0.01)
        .set_bloom_filter_position(position)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
    for rg in 0..64i64 {
        let ids: Vec<i64> = (0..2000).map(|i| rg * 1_000_000 + i * 7).collect();
        let payload: Vec<String> = ids
            .iter()
            .map(|i| format!("row {i} of some text"))
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(payload)),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
    }
    w.close().unwrap();
    Bytes::from(out)
}

/// Pruning one value of a 64-row-group file through object_store: the footer and the filters
/// in at most 3 requests (measured: footer GET + one coalesced filter GET).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_64_row_groups_in_few_requests() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let counting = Arc::new(Counting::new(store(&moto, BUCKET)));
    let store: Arc<dyn ObjectStore> = counting.clone();
    for (name, position) in [
        ("end.parquet", BloomFilterPosition::End),
        (
            "after_row_group.parquet",
            BloomFilterPosition::AfterRowGroup,
        ),
    ] {
        let data = write_64(position);
        moto.put(BUCKET, name, &data);
        let local = ParquetFile::open(data.clone()).unwrap();
        assert_eq!(local.metadata().num_row_groups(), 64);
        let filters: u64 = local
            .filter_locations(0)
            .iter()
            .map(|l| l.length.unwrap() as u64)
            .sum();
        let footer = local.file_len() - local.footer_start();

        counting.reset();
        let value: i64 = 17 * 1_000_000 + 7 * 123; // in row group 17 only
        let pred = Predicate::eq("id", Literal::Int(value.into()));
        let path = Path::from(name);
        let mut pq = object::open(&store, &path, data.len() as u64)
            .await
            .unwrap();
        let pruned = pq.prune_async(&pred, REMOTE_POLICY).await.unwrap();
        let requests = counting.requests();
        println!(
            "{name}: {} bytes, footer {footer} B, 64 filters {filters} B; prune `id = {value}` \
             kept row groups {:?}; {}",
            data.len(),
            pruned.row_groups,
            counting.report()
        );
        assert!(pruned.row_groups.contains(&17));
        assert!(pruned.row_groups.len() <= 4, "{:?}", pruned.row_groups);
        assert_eq!(pruned, local.prune(&pred).unwrap());
        assert_eq!(counting.heads.load(Ordering::SeqCst), 0);
        // No column data: the footer suffix and the filters (whole, by the cost rule).
        let read = counting.bytes.load(Ordering::SeqCst);
        assert!(
            read <= sbbf_parquet::read::async_driver::FOOTER_SUFFIX + filters,
            "{}",
            counting.report()
        );
        if position == BloomFilterPosition::End {
            // The footer, then every filter in one coalesced read.
            assert!(requests <= 3, "{}", counting.report());
        } else {
            // Filters ~80 KB apart (more than REMOTE_POLICY.max_gap): one read each, fetched
            // concurrently, rather than one read through 5 MB of column data.
            assert!(requests <= 1 + 64, "{}", counting.report());
            // All in one wave: more reads in flight at once than object_store's own
            // `get_ranges` allows (10).
            let most = counting.max_in_flight.load(Ordering::SeqCst);
            assert!(most > 10, "at most {most} in flight: {}", counting.report());
        }
        // The footer (one suffix read), then the filters: two waves, header and block reads
        // together since the footer gives `bloom_filter_length`.
        assert_eq!(pq.io_stats().waves, 2, "{:?}", pq.io_stats());

        // The same reader then serves arrow-rs' async reader for the kept row groups.
        counting.reset();
        let reader = ObjectReader::new(store.clone(), path.clone(), data.len() as u64)
            .with_coalesce(object_store::OBJECT_STORE_COALESCE_DEFAULT);
        let builder =
            ParquetRecordBatchStreamBuilder::new_with_options(reader, ArrowReaderOptions::new())
                .await
                .unwrap()
                .with_row_groups(pruned.row_groups.clone());
        let batches: Vec<RecordBatch> = builder.build().unwrap().try_collect().await.unwrap();
        let found = batches.iter().any(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .contains(&value)
        });
        assert!(found, "the value is in the kept row groups");
        println!("{name}: reading the kept row groups: {}", counting.report());
    }

    // Probing many values at once still reads each filter region once.
    counting.reset();
    let path = Path::from("end.parquet");
    let source = Source::open_store(
        "s3://b/end.parquet",
        store.clone(),
        path,
        SourceOptions::default(),
    )
    .await
    .unwrap();
    let got: Vec<_> = source
        .probe("id", |ty| {
            (0..50)
                .map(|i| {
                    sbbf_parquet::values::text::encode_text(
                        ty,
                        &(i * 1_000_000).to_string(),
                        Default::default(),
                    )
                    .map_err(sbbf_parquet::Error::from)
                })
                .collect()
        })
        .collect()
        .await;
    let r = got[0].1.as_ref().unwrap();
    assert!(r.answers.iter().all(|rg| rg.answers.len() == 50));
    assert_eq!(r.answers[3].answers[3], Answer::Maybe);
    println!("end.parquet: probe 50 values: {}", counting.report());
    assert!(counting.requests() <= 3, "{}", counting.report());
}

/// A long listing laid out in partition folders is split by folder (a delimited listing, then
/// each folder at once): the same objects as one flat listing, hidden folders left out. A
/// prefix with objects of its own on its first page, or a short one, is listed flat: one call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_partitioned_prefix_is_listed_by_folder() {
    let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let put = |name: String| {
        let inner = Arc::clone(&inner);
        async move {
            object_store::ObjectStoreExt::put(
                inner.as_ref(),
                &Path::from(name),
                PutPayload::from_static(b"x"),
            )
            .await
            .unwrap();
        }
    };
    let mut names = Vec::new();
    for p in 0..5 {
        for i in 0..450 {
            names.push(format!("t/p={p}/part-{i:04}.parquet"));
        }
    }
    names.push("t/p=1/q=a/deeper.parquet".into());
    names.push("t/p=2/notes.txt".into());
    let hidden = ["t/_tmp/0/part-0.parquet", "t/.staging/x.parquet"];
    for n in hidden {
        names.push(n.into());
    }
    for i in 0..1200 {
        names.push(format!("flat/f-{i:04}.parquet"));
    }
    for i in 0..10 {
        names.push(format!("small/p={}/f-{i}.parquet", i % 3));
    }
    futures::future::join_all(names.iter().cloned().map(put)).await;

    let counting = Arc::new(Counting::new(Arc::clone(&inner)));
    let store: Arc<dyn ObjectStore> = Arc::clone(&counting) as Arc<dyn ObjectStore>;
    for (prefix, lists) in [("t", 1 + 1 + 5), ("flat", 1), ("small", 1)] {
        counting.reset();
        let got: Vec<String> = object::list_parquet(&store, &Path::from(prefix))
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.location.to_string())
            .collect();
        let mut want: Vec<String> = names
            .iter()
            .filter(|n| n.starts_with(&format!("{prefix}/")) && n.ends_with(".parquet"))
            .filter(|n| !hidden.contains(&n.as_str()))
            .cloned()
            .collect();
        want.sort();
        assert_eq!(got, want, "{prefix}");
        assert_eq!(
            counting.lists.load(Ordering::SeqCst),
            lists,
            "{prefix}: {}",
            counting.report()
        );
    }
}

/// A file replaced between its footer's read and its filters' (a writer overwriting the
/// object in place) is not read at the old footer's offsets: the reads ask for the version the
/// footer came from (If-Match), and a refused read leaves its row groups "maybe".
#[tokio::test(flavor = "multi_thread")]
async fn a_file_replaced_while_read_is_never_answered_from_mixed_bytes() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let store = store(&moto, BUCKET);
    let path = Path::from("replaced.parquet");
    moto.put(
        BUCKET,
        "replaced.parquet",
        &write_64(BloomFilterPosition::End),
    );
    let mut pq = object::open_unsized(&store, &path).await.unwrap();
    let pred = Predicate::eq("id", Literal::Int(17 * 1_000_000 + 7 * 123));
    // Same size class, other layout: the old footer's filter offsets point at column data.
    store
        .put_opts(
            &path,
            PutPayload::from(write_64(BloomFilterPosition::AfterRowGroup)),
            PutOptions::default(),
        )
        .await
        .unwrap();
    // The filters' reads are refused (412): no filter answers, every row group is kept (a
    // "maybe", never an "absent" from the new object's bytes).
    let kept = pq.prune_async(&pred, REMOTE_POLICY).await.unwrap();
    assert_eq!(kept.row_groups, (0..64).collect::<Vec<_>>());
    let first = format!("{:?}", kept.reasons.first());
    assert!(first.to_lowercase().contains("precondition"), "{first}");
    // Opened again, the new object reads as itself.
    let mut pq = object::open_unsized(&store, &path).await.unwrap();
    let kept = pq.prune_async(&pred, REMOTE_POLICY).await.unwrap();
    assert!(kept.row_groups.contains(&17), "{kept:?}");
}
