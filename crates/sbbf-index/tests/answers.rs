//! The index's answers per (file, row group) against a direct probe of every file
//! (`Source::probe`, which never reads the index): an exact index (no `--fpp`) gives the same
//! "maybe" row groups, a folded one never calls "absent" what the file's filter calls "maybe";
//! and every present value is "maybe" wherever it is.

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use futures::StreamExt;
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::probe::{plan, Planned, Ruled, Why};
use sbbf_index::Root;
use sbbf_parquet::column::ColumnType;
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::value::{encode_text, EncodeOptions};
use sbbf_parquet::{Answer, Encoded};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// File `k`: ids `k * 1000 .. + rows`, row groups of `rows / rgs` rows, filters sized for
/// `ndv` values; modified a minute ago (recent files are not covered).
fn write_file(path: &Path, k: i64, rows: usize, rgs: usize, ndv: u64) {
    let ids: Vec<i64> = (0..rows as i64).map(|i| k * 1000 + i).collect();
    let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(StringArray::from(names)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows.div_ceil(rgs)))
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_max_ndv(ndv)
        .set_bloom_filter_fpp(0.05)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(ago)
        .unwrap();
}

fn table(dir: &Path) {
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
}

type Encode = Arc<dyn Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error> + Send + Sync>;

fn encoder(values: &[String]) -> Encode {
    let values = values.to_vec();
    Arc::new(move |ty: &ColumnType| {
        values
            .iter()
            .map(|v| encode_text(ty, v, EncodeOptions::default()).map_err(Into::into))
            .collect()
    })
}

/// Per file (by name): per row group, whether some value may be there, by a direct probe.
async fn direct(dir: &str, column: &str, values: &[String]) -> BTreeMap<String, Vec<bool>> {
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
async fn indexed(
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
            Planned::Direct {
                name,
                why: Why::Maybe(rgs),
            } => (name, Some(rgs)),
            Planned::Direct { name, .. } => (name, None),
        })
        .collect()
}

fn values() -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    for k in 0..40i64 {
        sets.push(vec![(k * 1000 + 7).to_string()]);
    }
    for x in 0..60i64 {
        sets.push(vec![(5_000_000 + x * 104_729).to_string()]);
    }
    sets.push((0..25).map(|x| (x * 1777).to_string()).collect());
    sets
}

#[tokio::test(flavor = "multi_thread")]
async fn exact_index_equals_direct_probes_per_row_group() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table(&dir);
    let d = dir.to_str().unwrap();
    let root = Root::open(d).unwrap().unwrap();
    let r = build(&root, &BuildOptions::default()).await.unwrap();
    assert_eq!((r.files_read, r.racy, r.failed.len()), (40, 0, 0));
    for vals in values() {
        let want = direct(d, "id", &vals).await;
        let got = indexed(&root, "id", &vals).await;
        assert_eq!(want.len(), got.len());
        for (name, maybe) in &want {
            let wanted: Vec<usize> = (0..maybe.len()).filter(|&i| maybe[i]).collect();
            assert_eq!(got[name].as_ref(), Some(&wanted), "{name} {vals:?}");
        }
    }
    // Strings too: present values are "maybe" where they are.
    for k in [0i64, 13, 39] {
        let vals = vec![format!("n{}", k * 1000 + 3)];
        let got = indexed(&root, "name", &vals).await;
        let name = dir.join(format!("p{k:02}.parquet")).display().to_string();
        assert!(!got[&name].as_ref().unwrap().is_empty(), "{vals:?}");
        let want = direct(d, "name", &vals).await;
        for (n, maybe) in &want {
            let wanted: Vec<usize> = (0..maybe.len()).filter(|&i| maybe[i]).collect();
            assert_eq!(got[n].as_ref(), Some(&wanted), "{n} {vals:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn folded_index_keeps_every_maybe() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table(&dir);
    let d = dir.to_str().unwrap();
    let root = Root::open(d).unwrap().unwrap();
    for fpp in [0.05, 0.2, 0.5] {
        let r = build(
            &root,
            &BuildOptions {
                fpp: Some(fpp),
                ..BuildOptions::default()
            },
        )
        .await
        .unwrap();
        let id = r.columns.iter().find(|c| c.column == "id").unwrap();
        assert!(id.folded > 0, "fpp {fpp}: {id:?}");
        // (A group's FPP is its worst entry's: files' own overfull filters stay as they are.)
        // Fewer, shared sizes than the files' own.
        assert!(id.groups.len() <= 4);
        let (mut index_absent, mut direct_absent) = (0, 0);
        for vals in values() {
            let want = direct(d, "id", &vals).await;
            let got = indexed(&root, "id", &vals).await;
            for (name, maybe) in &want {
                let g = got[name].as_ref().unwrap();
                for (rg, m) in maybe.iter().enumerate() {
                    if *m {
                        assert!(g.contains(&rg), "fpp {fpp}: {name} rg {rg} {vals:?}");
                    }
                    direct_absent += usize::from(!m);
                }
                index_absent += maybe.len() - g.len();
            }
        }
        // Folding costs some "absent" answers, never adds one.
        assert!(index_absent <= direct_absent);
        assert!(index_absent > 0);
    }
}
