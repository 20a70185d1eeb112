//! Helpers of the index's integration tests: a table written with arrow-rs (by
//! [`sbbf_testkit::table`]), direct probes (`Source::probe`, which never reads the index) and
//! the index's plan per file.

use futures::StreamExt;
use sbbf_index::probe::{plan, Planned, Ruled, Why};
use sbbf_index::Root;
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::values::text::{encode_text, EncodeOptions};
use sbbf_parquet::{Answer, Encoded};
use sbbf_testkit::table::{write_ids, Filter, Ids};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// File `k`: ids `k * 1000 .. + rows`, row groups of `rows / rgs` rows, filters sized for
/// `ndv` values (0: no filter on `id`, only on `name`). A build covers it only once its change
/// time is 2 s old: [`sbbf_testkit::settle`] waits for that.
pub fn write_file(path: &Path, k: i64, rows: usize, rgs: usize, ndv: u64) {
    let filter = Filter {
        ndv: ndv.max(16),
        fpp: Some(0.05),
    };
    write_ids(
        path,
        &Ids {
            first: k * 1000,
            rows,
            row_group_rows: rows.div_ceil(rgs),
            name_prefix: "n",
            id_filter: (ndv > 0).then_some(filter),
            name_filter: Some(filter),
        },
    );
}

pub fn table(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for k in 0..40 {
        let ndv = [16, 100, 400, 1500][k % 4];
        write_file(
            &dir.join(format!("p{k:02}.parquet")),
            k as i64,
            60 + k * 3,
            1 + k % 3,
            ndv,
        );
    }
    sbbf_testkit::settle(dir);
}

pub type Encode =
    Arc<dyn Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error> + Send + Sync>;

pub fn encoder(values: &[String]) -> Encode {
    let values = values.to_vec();
    Arc::new(move |ty: &ColumnType| {
        values
            .iter()
            .map(|v| encode_text(ty, v, EncodeOptions::default()).map_err(Into::into))
            .collect()
    })
}

/// Per file (by name): per row group, whether some value may be there, by a direct probe.
pub async fn direct(dir: &str, column: &str, values: &[String]) -> BTreeMap<String, Vec<bool>> {
    let source = Source::open(dir, SourceOptions::default()).await.unwrap();
    let enc = encoder(values);
    let mut out = BTreeMap::new();
    let mut results = source.probe(column, move |t| enc(t));
    while let Some((name, r)) = results.next().await {
        let p = r.unwrap();
        out.insert(
            name,
            p.answers
                .iter()
                .map(|rg| rg.answers.iter().any(|a| *a != Answer::Absent))
                .collect(),
        );
    }
    out
}

/// Per file: the row groups the index leaves as "maybe" (all, for files it does not cover).
pub async fn indexed(
    root: &Root,
    column: &str,
    values: &[String],
) -> BTreeMap<String, Option<Vec<usize>>> {
    let enc = encoder(values);
    let p = plan(root, column, move |t| enc(t), SourceOptions::default())
        .await
        .unwrap();
    assert!(p.stats.used && p.warning.is_none(), "{:?}", p.warning);
    p.files
        .into_iter()
        .map(|f| match f {
            Planned::Index {
                name,
                answer: Ruled::NoColumn,
            } => panic!("{name}: no column?"),
            Planned::Index {
                name,
                answer: Ruled::Absent(answer),
            } => {
                assert!(answer
                    .answers
                    .iter()
                    .all(|rg| rg.answers.iter().all(|a| *a == Answer::Absent)));
                (name, Some(Vec::new()))
            }
            Planned::Index {
                name,
                answer: Ruled::Answered(answer),
            } => {
                let rgs = answer
                    .answers
                    .iter()
                    .filter(|rg| rg.answers.iter().any(|a| *a != Answer::Absent))
                    .map(|rg| rg.row_group)
                    .collect();
                (name, Some(rgs))
            }
            Planned::Direct {
                name,
                why: Why::Maybe(rgs),
            } => (name, Some(rgs)),
            Planned::Direct { name, .. } => (name, None),
        })
        .collect()
}
