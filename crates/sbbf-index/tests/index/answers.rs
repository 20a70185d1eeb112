//! The index's answers per (file, row group) against a direct probe of every file
//! (`Source::probe`, which never reads the index): an exact index (no `--fpp`) gives the same
//! "maybe" row groups, a folded one never calls "absent" what the file's filter calls "maybe";
//! and every present value is "maybe" wherever it is.

use crate::common::{direct, indexed, table};
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::Root;

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
