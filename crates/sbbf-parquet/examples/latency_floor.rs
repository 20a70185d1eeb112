//! Round trips against their floor, with no server in the way: a [`Source`] over an in-memory
//! object store that holds every GET and every listing for a fixed latency (object_store's
//! `ThrottledStore`). A local S3 test server (moto) spends milliseconds of CPU per request and
//! copies a whole object for each ranged read, which hides the client's own cost; here the
//! only cost is the latency, so wall / floor measures the read planner alone.
//!
//! ```sh
//! cargo run --release -p sbbf-parquet --features object_store --example latency_floor -- [LATENCY_MS]
//! ```
//!
//! Cases: 1 file of 64 row groups (filters far apart) x {1, 64, 1000} values, floor = waves x
//! latency; {10, 100, 1000} small files x 1 value, floor = (1 listing + ceil(files x requests
//! per file / concurrency)) x latency. Prints a Markdown table.

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use futures::StreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use sbbf_parquet::source::{Source, SourceOptions, DEFAULT_CONCURRENCY};
use sbbf_parquet::values::text::encode_text;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn file(row_groups: i64, rows: i64, pad: bool, base: i64) -> Bytes {
    let mut fields = vec![Field::new("v", DataType::Int64, false)];
    if pad {
        fields.push(Field::new("pad", DataType::Binary, false));
    }
    let schema = Arc::new(Schema::new(fields));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows as usize))
        .set_dictionary_enabled(false)
        .set_bloom_filter_enabled(false)
        .set_column_bloom_filter_enabled("v".into(), true)
        .set_column_bloom_filter_max_ndv("v".into(), rows as u64)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).expect("writer");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for rg in 0..row_groups {
        let v = Int64Array::from_iter_values((0..rows).map(|i| base + rg * 1_000_000 + i));
        let mut cols: Vec<Arc<dyn arrow_array::Array>> = vec![Arc::new(v)];
        if pad {
            let pad: Vec<[u8; 24]> = (0..rows)
                .map(|_| {
                    let mut b = [0u8; 24];
                    for c in b.chunks_mut(8) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        c.copy_from_slice(&x.to_le_bytes());
                    }
                    b
                })
                .collect();
            cols.push(Arc::new(BinaryArray::from_iter_values(pad.iter())));
        }
        w.write(&RecordBatch::try_new(schema.clone(), cols).expect("batch"))
            .expect("write");
    }
    w.close().expect("close");
    Bytes::from(out)
}

async fn probe(
    store: &Arc<dyn ObjectStore>,
    url: &str,
    prefix: &str,
    values: Vec<String>,
) -> (Duration, u64, u64) {
    let t0 = Instant::now();
    let source = Source::open_store(
        url,
        Arc::clone(store),
        Path::from(prefix),
        SourceOptions::default(),
    )
    .await
    .expect("source");
    let mut results = source.probe("v", move |ty| {
        values
            .iter()
            .map(|v| encode_text(ty, v, Default::default()).map_err(Into::into))
            .collect()
    });
    let (mut requests, mut waves) = (0, 0);
    while let Some((name, r)) = results.next().await {
        let p = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        requests = requests.max(p.io.requests);
        waves = waves.max(p.io.waves);
    }
    (t0.elapsed(), requests, waves)
}

#[tokio::main]
async fn main() {
    let ms: u64 = std::env::args()
        .nth(1)
        .map_or(20, |s| s.parse().expect("latency in ms"));
    let latency = Duration::from_millis(ms);
    let memory = Arc::new(InMemory::new());
    let put = |path: String, data: Bytes| {
        let m = Arc::clone(&memory);
        async move {
            m.put(&Path::from(path), PutPayload::from(data))
                .await
                .expect("put");
        }
    };
    put("big/f.parquet".into(), file(64, 5000, true, 0)).await;
    for n in [10usize, 100, 1000] {
        for i in 0..n {
            put(
                format!("many{n}/part-{i:05}.parquet"),
                file(1, 1000, false, i as i64 * 1000),
            )
            .await;
        }
    }
    let store: Arc<dyn ObjectStore> = Arc::new(ThrottledStore::new(
        Arc::clone(&memory),
        ThrottleConfig {
            wait_get_per_call: latency,
            wait_list_per_call: latency,
            ..ThrottleConfig::default()
        },
    ));
    let secs = |d: Duration| d.as_secs_f64();
    println!(
        "\nIn-memory store, every GET and listing held {ms} ms (object_store's ThrottledStore), concurrency {DEFAULT_CONCURRENCY}.\n"
    );
    println!("| case | requests per file | waves per file | wall | floor | wall / floor |");
    println!("|---|---:|---:|---:|---:|---:|");
    for n in [1i64, 64, 1000] {
        let values: Vec<String> = (0..n)
            .map(|i| ((i % 64) * 1_000_000 + i * 7 % 5000).to_string())
            .collect();
        let (wall, requests, waves) =
            probe(&store, "mem://big/f.parquet", "big/f.parquet", values).await;
        let floor = latency * waves as u32;
        println!(
            "| 1 file x {n} value(s) | {requests} | {waves} | {:.3} s | {:.3} s | {:.2} |",
            secs(wall),
            secs(floor),
            secs(wall) / secs(floor).max(f64::MIN_POSITIVE)
        );
    }
    for n in [10u64, 100, 1000] {
        let prefix = format!("many{n}");
        let (wall, requests, waves) = probe(
            &store,
            &format!("mem://{prefix}/"),
            &prefix,
            vec!["5".into()],
        )
        .await;
        let trips = 1 + (n * requests).div_ceil(DEFAULT_CONCURRENCY as u64);
        let floor = latency * trips as u32;
        println!(
            "| {n} files x 1 value | {requests} | {waves} | {:.3} s | {:.3} s ({trips} round trips) | {:.2} |",
            secs(wall),
            secs(floor),
            secs(wall) / secs(floor).max(f64::MIN_POSITIVE)
        );
    }
}
