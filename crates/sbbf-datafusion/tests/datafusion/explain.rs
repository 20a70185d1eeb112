//! What an engine user sees: our counters in `EXPLAIN ANALYZE`, DataFusion's own Bloom reads
//! switched off in our table, and the same footers reused (no second footer read per file).

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use sbbf_datafusion::{register, ScanStats};

const FILE: &str = "../../testdata/pa_ints.parquet";
const QUERY: &str = "SELECT * FROM t WHERE i64 = -752296985104395475";

#[tokio::test]
async fn explain_analyze_shows_our_counters() {
    let ctx = SessionContext::new();
    register(&ctx, "t", FILE).await.unwrap();
    let out = ctx
        .sql(&format!("EXPLAIN ANALYZE {QUERY}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = pretty_format_batches(&out).unwrap().to_string();
    assert!(text.contains("row_groups_pruned_sbbf=3"), "{text}");
    assert!(text.contains("row_groups_tested_sbbf=4"), "{text}");
    assert!(text.contains("sbbf_requests="), "{text}");
    assert!(text.contains("sbbf_bytes="), "{text}");
}

#[tokio::test]
async fn datafusion_reads_no_filter_where_ours_decide() {
    let ctx = SessionContext::new();
    register(&ctx, "t", FILE).await.unwrap();
    let plan = ctx
        .sql(QUERY)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    assert!(batches.iter().map(|b| b.num_rows()).sum::<usize>() > 0);
    let s = ScanStats::of(&plan);
    assert_eq!(s.pruned_sbbf, 3, "{s:?}");
    assert_eq!(s.pruned_datafusion_bloom, 0, "{s:?}");
    assert_eq!(s.read, 1, "{s:?}");
    // One wave of filter reads: the four row groups' blocks, coalesced by the I/O policy.
    assert!(s.sbbf_requests >= 1 && s.sbbf_requests <= 4, "{s:?}");
    assert!(s.sbbf_bytes < 64 * 1024, "{s:?}");
}

#[tokio::test]
async fn a_predicate_filters_cannot_decide_prunes_nothing() {
    let ctx = SessionContext::new();
    register(&ctx, "t", FILE).await.unwrap();
    for q in [
        "SELECT * FROM t WHERE i64 > 0",
        "SELECT * FROM t WHERE i64 + 1 = 43",
        "SELECT * FROM t WHERE CAST(i64 AS VARCHAR) = '042'",
        "SELECT * FROM t WHERE i64 = 42 OR i32 > 5",
        "SELECT * FROM t WHERE NOT (i64 = 42)",
    ] {
        let plan = ctx
            .sql(q)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        collect(plan.clone(), ctx.task_ctx()).await.unwrap();
        let s = ScanStats::of(&plan);
        assert_eq!(s.pruned_sbbf, 0, "{q}: {s:?}");
        assert_eq!(s.sbbf_requests, 0, "{q}: {s:?}");
    }
}
