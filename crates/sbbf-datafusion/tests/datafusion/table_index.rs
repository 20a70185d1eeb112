//! The table index and the scan: the files it rules out are never opened (no request reaches
//! them: no footer, no filter, no page), and the rows are those of the scan without it.

use async_trait::async_trait;
use datafusion::arrow::array::{Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::config::TableParquetOptions;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::prelude::SessionContext;
use futures::stream::BoxStream;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use sbbf_datafusion::SbbfTable;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The local file system, counting the reads of each object (gets and range gets).
#[derive(Debug, Default)]
struct Reads {
    fs: LocalFileSystem,
    by_object: Mutex<BTreeMap<String, usize>>,
}

impl Reads {
    fn count(&self, location: &Path) {
        let mut m = self.by_object.lock().unwrap();
        *m.entry(location.to_string()).or_default() += 1;
    }

    fn of(&self, name: &str) -> usize {
        let m = self.by_object.lock().unwrap();
        m.iter()
            .filter(|(k, _)| k.ends_with(&format!("/{name}")))
            .map(|(_, n)| n)
            .sum()
    }
}

impl std::fmt::Display for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reads")
    }
}

#[async_trait]
impl ObjectStore for Reads {
    async fn put_opts(
        &self,
        l: &Path,
        p: PutPayload,
        o: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.fs.put_opts(l, p, o).await
    }
    async fn put_multipart_opts(
        &self,
        l: &Path,
        o: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.fs.put_multipart_opts(l, o).await
    }
    async fn get_opts(&self, l: &Path, o: GetOptions) -> object_store::Result<GetResult> {
        self.count(l);
        self.fs.get_opts(l, o).await
    }
    async fn get_ranges(
        &self,
        l: &Path,
        r: &[std::ops::Range<u64>],
    ) -> object_store::Result<Vec<bytes::Bytes>> {
        self.count(l);
        self.fs.get_ranges(l, r).await
    }
    fn delete_stream(
        &self,
        s: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.fs.delete_stream(s)
    }
    fn list(&self, p: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.fs.list(p)
    }
    async fn list_with_delimiter(&self, p: Option<&Path>) -> object_store::Result<ListResult> {
        self.fs.list_with_delimiter(p).await
    }
    async fn copy_opts(&self, a: &Path, b: &Path, o: CopyOptions) -> object_store::Result<()> {
        self.fs.copy_opts(a, b, o).await
    }
}

/// `f{i}.parquet` for i in 0..8: the ids `i + 8 k` below 8,000 (every file's min/max cover
/// nearly all of them: only the filters tell the files apart), Bloom filters written by
/// DataFusion; then aged (the index leaves out files modified just before its build) and
/// indexed.
async fn table() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ctx = SessionContext::new();
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut options = TableParquetOptions::default();
    options.global.bloom_filter_on_write = true;
    options.global.bloom_filter_ndv = Some(1000);
    for i in 0..8i64 {
        let ids = Int64Array::from_iter_values((0..1000).map(|k| i + 8 * k));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap();
        let path = dir.path().join(format!("f{i}.parquet"));
        ctx.read_batch(batch)
            .unwrap()
            .write_parquet(
                path.to_str().unwrap(),
                DataFrameWriteOptions::new().with_single_file_output(true),
                Some(options.clone()),
            )
            .await
            .unwrap();
    }
    // A file changed in the last 2 s is not covered by a build: wait that out.
    sbbf_testkit::settle(dir.path());
    let root = sbbf_index::Root::open(dir.path().to_str().unwrap())
        .unwrap()
        .unwrap();
    sbbf_index::build::build(&root, &Default::default())
        .await
        .unwrap();
    dir
}

/// The first column's ids, sorted.
fn sorted_ids(batches: &[RecordBatch]) -> Vec<i64> {
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            a.values().to_vec()
        })
        .collect();
    ids.sort();
    ids
}

/// The rows of `sql` over the table at `dir` (index on or off), and the reads per file while
/// planning and running it.
async fn run(dir: &std::path::Path, sql: &str, index: bool) -> (Vec<i64>, Arc<Reads>) {
    let (planning, ids, running) = planned_then_run(dir, sql, index).await;
    for (k, n) in planning.by_object.lock().unwrap().iter() {
        *running
            .by_object
            .lock()
            .unwrap()
            .entry(k.clone())
            .or_default() += n;
    }
    (ids, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_index_rules_out_are_never_read() {
    let dir = table().await;
    let sql = "SELECT id FROM t WHERE id IN (3003, 5005)";
    let (with, reads) = run(dir.path(), sql, true).await;
    let (without, plain) = run(dir.path(), sql, false).await;
    assert_eq!(with, vec![3003, 5005]);
    assert_eq!(with, without);
    for i in [0, 1, 2, 4, 6, 7] {
        let name = format!("f{i}.parquet");
        // Without the index the query reads every file (its filters at least)...
        assert!(plain.of(&name) > 0, "{name}: {:?}", plain.by_object);
        // ...with it, the files it rules out are not touched.
        assert_eq!(reads.of(&name), 0, "{name}: {:?}", reads.by_object);
    }
    assert!(reads.of("f3.parquet") > 0 && reads.of("f5.parquet") > 0);
}

/// The schema of the table at `dir` registered with the index (or not), and the files whose
/// footers registering it read.
async fn registered(
    dir: &std::path::Path,
    index: bool,
) -> (datafusion::arrow::datatypes::SchemaRef, Arc<Reads>) {
    use datafusion::datasource::TableProvider;
    let ctx = SessionContext::new();
    let reads = Arc::new(Reads::default());
    let url = url::Url::parse("file://").unwrap();
    ctx.register_object_store(&url, reads.clone());
    let t = SbbfTable::with_options(&ctx.state(), dir.to_str().unwrap(), true, index)
        .await
        .unwrap();
    (t.schema(), reads)
}

fn files_read(r: &Reads) -> usize {
    r.by_object.lock().unwrap().len()
}

/// Writes `name` under `dir` with int64 columns `cols` (ids 0..10), aged by a minute.
async fn write_cols(dir: &std::path::Path, name: &str, cols: &[&str]) {
    let schema = Arc::new(Schema::new(
        cols.iter()
            .map(|c| Field::new(*c, DataType::Int64, false))
            .collect::<Vec<_>>(),
    ));
    let arrays = cols
        .iter()
        .map(|_| Arc::new(Int64Array::from_iter_values(0..10)) as _)
        .collect();
    write(
        &dir.join(name),
        RecordBatch::try_new(schema, arrays).unwrap(),
    )
    .await;
}

/// Writes `batch` to `path` as one Parquet file, as DataFusion writes it by default.
async fn write(path: &std::path::Path, batch: RecordBatch) {
    SessionContext::new()
        .read_batch(batch)
        .unwrap()
        .write_parquet(
            path.to_str().unwrap(),
            DataFrameWriteOptions::new().with_single_file_output(true),
            None,
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registering_reads_one_footer_per_schema_the_index_knows() {
    let dir = table().await;
    let (with, reads) = registered(dir.path(), true).await;
    let (without, plain) = registered(dir.path(), false).await;
    assert_eq!(with, without);
    // Eight files of one schema: one footer with the index, all eight without.
    assert_eq!(files_read(&reads), 1, "{:?}", reads.by_object);
    assert_eq!(files_read(&plain), 8, "{:?}", plain.by_object);

    // Another schema among the indexed files: one footer of it too, and its column is in the
    // table's schema as DataFusion's own inference has it.
    write_cols(dir.path(), "g0.parquet", &["id", "extra"]).await;
    write_cols(dir.path(), "g1.parquet", &["id", "extra"]).await;
    sbbf_testkit::settle(dir.path());
    let root = sbbf_index::Root::open(dir.path().to_str().unwrap())
        .unwrap()
        .unwrap();
    sbbf_index::build::update(&root, 16).await.unwrap();
    let (with, reads) = registered(dir.path(), true).await;
    let (without, _) = registered(dir.path(), false).await;
    assert_eq!(with, without);
    assert!(with.field_with_name("extra").is_ok());
    assert_eq!(files_read(&reads), 2, "{:?}", reads.by_object);

    // A file added after the index (and one changed since) is read whatever its schema.
    write_cols(dir.path(), "h.parquet", &["id", "late"]).await;
    write_cols(dir.path(), "f7.parquet", &["id", "changed"]).await;
    let (with, reads) = registered(dir.path(), true).await;
    let (without, _) = registered(dir.path(), false).await;
    assert_eq!(with, without);
    assert!(with.field_with_name("late").is_ok() && with.field_with_name("changed").is_ok());
    assert_eq!(files_read(&reads), 4, "{:?}", reads.by_object);

    // A damaged index: every footer, the same schema.
    let ix = dir.path().join("_sbbf_index/index.sbbfi");
    let mut b = std::fs::read(&ix).unwrap();
    let n = b.len();
    b[n - 50] ^= 0xff;
    std::fs::write(&ix, b).unwrap();
    let (with, reads) = registered(dir.path(), true).await;
    assert_eq!(with, without);
    assert_eq!(files_read(&reads), 11, "{:?}", reads.by_object);
}

/// The ids of a join of the table at `dir` (index on or off) with a dimension of `keys`, the
/// reads per file during the query, and the scan's figures.
async fn join(
    dir: &std::path::Path,
    keys: &[i64],
    index: bool,
) -> (Vec<i64>, Arc<Reads>, sbbf_datafusion::ScanStats) {
    use datafusion::datasource::MemTable;
    let ctx = SessionContext::new();
    let reads = Arc::new(Reads::default());
    let url = url::Url::parse("file://").unwrap();
    ctx.register_object_store(&url, reads.clone());
    let t = SbbfTable::try_new(&ctx.state(), dir.to_str().unwrap())
        .await
        .unwrap()
        .with_index(index)
        .with_name("t");
    ctx.register_table("t", Arc::new(t)).unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(keys.to_vec()))],
    )
    .unwrap();
    let d = MemTable::try_new(schema, vec![vec![batch]]).unwrap();
    ctx.register_table("d", Arc::new(d)).unwrap();
    reads.by_object.lock().unwrap().clear();
    let plan = ctx
        .sql("SELECT t.id FROM t JOIN d ON t.id = d.k")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx())
        .await
        .unwrap();
    let ids = sorted_ids(&batches);
    (ids, reads, sbbf_datafusion::ScanStats::of_table(&plan, "t"))
}

/// A join's keys are asked of the index too, once, when the scan opens its first file: the
/// files it rules out are dropped there, their filters never read (DataFusion read their
/// footers already, for its statistics, while planning); the rows are those without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joins_keys_drop_the_files_the_index_rules_out() {
    let dir = table().await;
    // 3003 is in f3, 5005 in f5; 7_777_777 is nowhere.
    let keys = [3003, 5005, 7_777_777];
    let (with, reads, stats) = join(dir.path(), &keys, true).await;
    let (without, plain, plain_stats) = join(dir.path(), &keys, false).await;
    assert_eq!(with, vec![3003, 5005]);
    assert_eq!(with, without);
    assert_eq!(stats.join_files_pruned_index, 6, "{stats:?}");
    assert_eq!(plain_stats.join_files_pruned_index, 0, "{plain_stats:?}");
    assert!(stats.read <= 2, "{stats:?}");
    for i in [0, 1, 2, 4, 6, 7] {
        let name = format!("f{i}.parquet");
        // Without the index our scan reads each file's filters when it opens it; with it,
        // nothing more than what DataFusion's planning read.
        assert!(
            reads.of(&name) < plain.of(&name),
            "{name}: with {:?}, without {:?}",
            reads.by_object,
            plain.by_object
        );
    }
}

/// The plan of `sql` over the table at `dir` (index on or off), the reads per file while
/// planning it, its rows (first column, sorted) and the reads per file while running it.
async fn planned_then_run(
    dir: &std::path::Path,
    sql: &str,
    index: bool,
) -> (Arc<Reads>, Vec<i64>, Arc<Reads>) {
    let ctx = SessionContext::new();
    let reads = Arc::new(Reads::default());
    let url = url::Url::parse("file://").unwrap();
    ctx.register_object_store(&url, reads.clone());
    let t = SbbfTable::try_new(&ctx.state(), dir.to_str().unwrap())
        .await
        .unwrap()
        .with_index(index);
    ctx.register_table("t", Arc::new(t)).unwrap();
    reads.by_object.lock().unwrap().clear();
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let planning = Arc::new(Reads::default());
    std::mem::swap(
        &mut *planning.by_object.lock().unwrap(),
        &mut *reads.by_object.lock().unwrap(),
    );
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .unwrap();
    (planning, sorted_ids(&batches), reads)
}

/// What the index knows of a file as it is now stands in for its footer while a query is
/// planned: the files it rules out are not listed, the others are planned from its row
/// groups, and their row counts are DataFusion's statistics. Planning reads none of the
/// table's files; running reads only those holding rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_table_is_planned_without_reading_footers() {
    let dir = table().await;
    let data = |r: &Reads| {
        (0..8)
            .map(|i| r.of(&format!("f{i}.parquet")))
            .sum::<usize>()
    };

    let sql = "SELECT id FROM t WHERE id IN (3003, 5005)";
    let (planning, ids, running) = planned_then_run(dir.path(), sql, true).await;
    assert_eq!(ids, vec![3003, 5005]);
    assert_eq!(data(&planning), 0, "{:?}", planning.by_object);
    for i in [0, 1, 2, 4, 6, 7] {
        assert_eq!(
            running.of(&format!("f{i}.parquet")),
            0,
            "{:?}",
            running.by_object
        );
    }
    // Without the index, planning reads every footer.
    let (planning, plain_ids, _) = planned_then_run(dir.path(), sql, false).await;
    assert_eq!(plain_ids, ids);
    assert!(data(&planning) >= 8, "{:?}", planning.by_object);

    // `count(*)` is the row counts the index holds: no file is read at all.
    let sql = "SELECT count(*) AS n FROM t";
    let (planning, n, running) = planned_then_run(dir.path(), sql, true).await;
    assert_eq!(n, vec![8000]);
    assert_eq!(
        data(&planning) + data(&running),
        0,
        "{:?}",
        running.by_object
    );

    // A file rewritten since the build is planned from its own footer, and counted as it
    // is now: it lost half its rows and gained an id no other file holds.
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids = Int64Array::from_iter_values((0..500).map(|k| 3 + 8 * k).chain([9_999_999]));
    let f3 = dir.path().join("f3.parquet");
    std::fs::remove_file(&f3).unwrap();
    write(
        &f3,
        RecordBatch::try_new(schema, vec![Arc::new(ids)]).unwrap(),
    )
    .await;
    let (planning, n, _) = planned_then_run(dir.path(), "SELECT count(*) FROM t", true).await;
    assert_eq!(n, vec![7501]);
    assert_eq!(data(&planning), planning.of("f3.parquet"));
    let sql = "SELECT id FROM t WHERE id IN (9999999, 3003)";
    let (_, ids, _) = planned_then_run(dir.path(), sql, true).await;
    assert_eq!(ids, vec![3003, 9_999_999]);
}

/// Over a store read as a remote one, a lake table's scan reads each file's footer itself (with the
/// filters behind it, in one request), not into DataFusion's cache: counting the table's row
/// groups (`--stats`) takes those files' counts from that read instead of reading each footer
/// again (it read every footer once more, one file after another: 200 serial requests on a
/// 100-file table, 1.5 s of a 0.6 s lookup at 50 ms a request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counting_row_groups_reads_no_footer_a_scan_read() {
    let dir = table().await;
    // The folder as a Delta table: a log adding its files, without statistics (so every
    // file's footer is read, and its filters rule all but one out).
    std::fs::create_dir(dir.path().join("_delta_log")).unwrap();
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}"#;
    let mut log = vec![
        r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#.to_string(),
        serde_json::json!({"metaData": {"id": "00000000-0000-4000-8000-000000000001",
            "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
            "partitionColumns": [], "configuration": {}, "createdTime": 0}})
        .to_string(),
    ];
    for i in 0..8 {
        let name = format!("f{i}.parquet");
        let size = std::fs::metadata(dir.path().join(&name)).unwrap().len();
        log.push(
            serde_json::json!({"add": {"path": name, "partitionValues": {}, "size": size,
                "modificationTime": 0, "dataChange": true}})
            .to_string(),
        );
    }
    let commit = dir.path().join("_delta_log/00000000000000000000.json");
    std::fs::write(commit, log.join("\n") + "\n").unwrap();
    let ctx = SessionContext::new();
    let reads = Arc::new(Reads {
        fs: LocalFileSystem::new_with_prefix(dir.path()).unwrap(),
        by_object: Default::default(),
    });
    ctx.register_object_store(&url::Url::parse("s3://bucket").unwrap(), reads.clone());
    let t = Arc::new(
        SbbfTable::with_options(&ctx.state(), "s3://bucket/", true, false)
            .await
            .unwrap(),
    );
    ctx.register_table("t", t.clone()).unwrap();
    let got = ctx
        .sql("SELECT id FROM t WHERE id = 3003")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(sorted_ids(&got), vec![3003]);
    let total = |r: &Reads| r.by_object.lock().unwrap().values().sum::<usize>();
    let before = total(&reads);
    assert_eq!(t.row_groups(&ctx.state()).await.unwrap(), 8);
    assert_eq!(total(&reads), before, "{:?}", reads.by_object);
}
