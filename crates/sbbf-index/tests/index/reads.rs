//! What a probe with the index reads: no data file at all when the index covers every file
//! with its own filters; for one value, at most 32 bytes per covered (file, row
//! group) entry plus 100 bytes of index metadata per file, in two waves of the index (its
//! first read beside the listing, then everything else at once), with file names as Spark
//! writes them (a folder per partition, a UUID in every name).

use crate::common::{direct, encoder, write_file};
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::probe::{plan, Ruled};
use sbbf_index::Root;
use sbbf_parquet::source::SourceOptions;
use sbbf_parquet::Answer;

#[tokio::test(flavor = "multi_thread")]
async fn one_value_reads_at_most_32_bytes_an_entry_and_100_a_file() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    let n = 1200;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for k in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let uuid = format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            x >> 32,
            (x >> 16) & 0xffff,
            x & 0xffff,
            (x >> 48) & 0xffff,
            x.rotate_left(17) & 0xffff_ffff_ffff
        );
        let part = dir.join(format!("date=2026-11-{:02}", 1 + k % 30));
        std::fs::create_dir_all(&part).unwrap();
        write_file(
            &part.join(format!("part-{k:05}-{uuid}-c000.snappy.parquet")),
            k as i64,
            20,
            1,
            16,
        );
    }
    sbbf_testkit::settle(&dir);
    let d = dir.to_str().unwrap();
    let root = Root::open(d).unwrap().unwrap();
    let r = build(&root, &BuildOptions::default()).await.unwrap();
    assert_eq!((r.files_read, r.racy, r.failed.len()), (n, 0, 0));

    for value in ["5", "999999999"] {
        let vals = vec![value.to_string()];
        let enc = encoder(&vals);
        let p = plan(&root, "id", move |t| enc(t), SourceOptions::default())
            .await
            .unwrap();
        assert!(p.stats.used && p.warning.is_none(), "{:?}", p.warning);
        let st = p.stats.index;
        let bound = 32 * n as u64 + 100 * n as u64;
        assert!(
            st.bytes <= bound,
            "{} bytes of the index for one value over {n} files (bound {bound})",
            st.bytes
        );
        assert_eq!(st.waves, 2, "{st:?}");
        // Every file is covered by its own (unfolded) filters: the index answers all of them,
        // present value or not, and none is opened.
        assert_eq!((p.stats.from_index, p.stats.direct), (n, 0), "{value}");
        assert!(p.source.is_empty(), "{value}: files left to read");
        // The index's answers are the files' own, row group by row group.
        let want = direct(d, "id", &vals).await;
        for f in &p.files {
            let sbbf_index::probe::Planned::Index { name, answer } = f else {
                unreachable!()
            };
            let got: Vec<bool> = match answer {
                Ruled::Absent(a) | Ruled::Answered(a) => a
                    .answers
                    .iter()
                    .map(|rg| rg.answers.iter().any(|x| *x != Answer::Absent))
                    .collect(),
                Ruled::NoColumn => unreachable!("{name}"),
            };
            assert_eq!(got, want[name], "{name}");
        }
        println!("{value}: {} bytes of the index, {st:?}", st.bytes);
    }
}
