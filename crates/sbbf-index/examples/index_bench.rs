//! The table index against probing every file, on an in-memory object store that holds every
//! request for a fixed latency (object_store's `ThrottledStore`), so waves and requests are
//! what costs.
//!
//! ```sh
//! cargo run --release -p sbbf-index --example index_bench -- [LATENCY_MS] [FILES...]
//! cargo run --release -p sbbf-index --example index_bench -- --write-dir DIR FILES
//! ```
//!
//! Each table is FILES files of one row group of 1,000 rows, an int64 key `k` (unique across
//! the table) and a string `s`, both with filters sized for 1 % FPP. Prints Markdown tables:
//! the build (wall, requests, index size), then 1, 100 and 1,000 values of `k` (half present)
//! with and without the index: requests, waves on the critical path, bytes, wall.

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use futures::StreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::Root;
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::values::text::{encode_text, EncodeOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: i64 = 1000;

fn file(base: i64) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let props = WriterProperties::builder()
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_fpp(0.01)
        .set_bloom_filter_max_ndv(ROWS as u64)
        .build();
    let k = Int64Array::from_iter_values(base..base + ROWS);
    let s = StringArray::from_iter_values((base..base + ROWS).map(|i| format!("user-{i}")));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(k), Arc::new(s)]).unwrap();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// Keys: half present (spread over the table), half beyond its end.
fn keys(n: usize, files: usize) -> Vec<String> {
    let total = files as i64 * ROWS;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % total as u64) as i64;
            if i % 2 == 0 { v } else { total + v }.to_string()
        })
        .collect()
}

struct Run {
    requests: u64,
    bytes: u64,
    waves: u64,
    wall: Duration,
    files_read: usize,
    /// Bytes of the index read (0 without it).
    index_bytes: u64,
}

fn encoder(
    values: Vec<String>,
) -> impl Fn(&ColumnType) -> Result<Vec<sbbf_parquet::Encoded>, sbbf_parquet::Error>
       + Clone
       + Send
       + Sync
       + 'static {
    let values = Arc::new(values);
    move |ty: &ColumnType| {
        values
            .iter()
            .map(|v| encode_text(ty, v, EncodeOptions::default()).map_err(Into::into))
            .collect()
    }
}

async fn direct(store: Arc<dyn ObjectStore>, values: Vec<String>) -> Run {
    let started = Instant::now();
    let source = Source::open_store("mem://t/", store, Path::from("t"), SourceOptions::default())
        .await
        .unwrap();
    let mut results = source.probe("k", encoder(values));
    let (mut requests, mut bytes, mut waves, mut files) = (1, 0, 0, 0);
    while let Some((_, r)) = results.next().await {
        let p = r.unwrap();
        requests += p.io.requests;
        bytes += p.io.bytes;
        waves = waves.max(p.io.waves);
        files += 1;
    }
    Run {
        requests,
        bytes,
        waves: 1 + waves,
        wall: started.elapsed(),
        files_read: files,
        index_bytes: 0,
    }
}

async fn indexed(root: &Root, values: Vec<String>) -> Run {
    let started = Instant::now();
    let enc = encoder(values);
    let plan = sbbf_index::probe::plan(root, "k", enc.clone(), SourceOptions::default())
        .await
        .unwrap();
    assert!(plan.stats.used, "{:?}", plan.warning);
    let st = plan.stats;
    let mut results = plan.source.probe("k", enc);
    let (mut requests, mut bytes, mut waves) =
        (st.listing.requests + st.index.requests, st.index.bytes, 0);
    while let Some((_, r)) = results.next().await {
        let p = r.unwrap();
        requests += p.io.requests;
        bytes += p.io.bytes;
        waves = waves.max(p.io.waves);
    }
    Run {
        requests,
        bytes,
        waves: st.waves_before_direct + waves,
        wall: started.elapsed(),
        files_read: st.direct,
        index_bytes: st.index.bytes,
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--write-dir DIR N`: only write a table of N files to DIR (to time `sbbf index build` on
    // local disk).
    if args.first().map(String::as_str) == Some("--write-dir") {
        let dir = std::path::Path::new(&args[1]);
        let n: usize = args[2].parse().unwrap();
        std::fs::create_dir_all(dir).unwrap();
        for i in 0..n {
            std::fs::write(
                dir.join(format!("part-{i:05}.parquet")),
                file(i as i64 * ROWS),
            )
            .unwrap();
        }
        return;
    }
    let latency_ms: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(20);
    let sizes: Vec<usize> = if args.len() > 1 {
        args[1..].iter().map(|a| a.parse().unwrap()).collect()
    } else {
        vec![1000, 10000]
    };
    let latency = Duration::from_millis(latency_ms);
    println!("latency {latency_ms} ms per request\n");
    println!("| files | build wall | build requests | index bytes | bytes per file |");
    println!("| ---: | ---: | ---: | ---: | ---: |");
    let mut rows = Vec::new();
    for &n in &sizes {
        let mem = Arc::new(InMemory::new());
        for i in 0..n {
            let path = Path::from(format!("t/part-{i:05}.parquet"));
            mem.put(&path, PutPayload::from(file(i as i64 * ROWS)))
                .await
                .unwrap();
        }
        let cfg = ThrottleConfig {
            wait_get_per_call: latency,
            wait_list_per_call: latency,
            wait_list_with_delimiter_per_call: latency,
            wait_put_per_call: latency,
            ..ThrottleConfig::default()
        };
        let store: Arc<dyn ObjectStore> = Arc::new(ThrottledStore::new(mem, cfg));
        let root = Root::from_store("mem://t/", Arc::clone(&store), Path::from("t"));
        let started = Instant::now();
        let report = build(&root, &BuildOptions::default()).await.unwrap();
        println!(
            "| {n} | {:.1} s | {} | {} | {:.0} |",
            started.elapsed().as_secs_f64(),
            report.requests + 2,
            report.index_bytes,
            report.index_bytes as f64 / n as f64
        );
        for nv in [1usize, 100, 1000] {
            let vals = keys(nv, n);
            let d = direct(Arc::clone(&store), vals.clone()).await;
            let x = indexed(&root, vals).await;
            rows.push((n, nv, d, x));
        }
    }
    println!();
    // The issue's bound on the index's bytes per value: 32 bytes per covered (file, row group)
    // entry (one here) and 100 bytes of metadata per file.
    println!("| files | values | without index: requests / waves / bytes / wall | with index: requests / waves / bytes / wall | files read with index | index bytes per value / bound |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for (n, nv, d, x) in rows {
        println!(
            "| {n} | {nv} | {} / {} / {} / {} ms | {} / {} / {} / {} ms | {} of {} | {} / {} |",
            d.requests,
            d.waves,
            d.bytes,
            d.wall.as_millis(),
            x.requests,
            x.waves,
            x.bytes,
            x.wall.as_millis(),
            x.files_read,
            d.files_read,
            x.index_bytes / nv as u64,
            32 * n + 100 * n
        );
    }
}
