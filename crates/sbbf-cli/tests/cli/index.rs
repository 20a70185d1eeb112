//! `sbbf index` and `sbbf probe` on a table root with an index: the output of a probe with the
//! index is byte for byte the output of the same probe without it (`--no-index`, which reads
//! every file), whatever happened to the table or the index since the build.

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use sbbf_testkit::table::{write_ids, Filter, Ids};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

fn sbbf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(args)
        .output()
        .expect("run sbbf")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes one file of `rows` rows whose ids start at `first`, in row groups of `rg_rows`, with
/// filters sized for `ndv` values (so files get filters of different sizes); `name_filter`:
/// whether the string column has one too.
fn write_file(path: &Path, first: i64, rows: usize, rg_rows: usize, ndv: u64, name_filter: bool) {
    write_ids(
        path,
        &Ids {
            first,
            rows,
            row_group_rows: rg_rows,
            name_prefix: "name-",
            id_filter: Some(Filter {
                ndv,
                fpp: Some(0.01),
            }),
            name_filter: name_filter.then_some(Filter { ndv, fpp: None }),
        },
    );
}

/// A table of `n` files in `dir` (some in a subfolder, some of two row groups, one without a
/// filter on `name`); file `k` holds ids `k * 1000 ..`.
fn make_table(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir.join("part=1")).unwrap();
    for k in 0..n {
        let sub = if k % 5 == 4 { "part=1/" } else { "" };
        let path = dir.join(format!("{sub}f{k:03}.parquet"));
        let ndv = [64, 300, 2000][k % 3];
        let rows = 40 + (k % 7) * 10;
        let rg_rows = if k % 4 == 0 { rows / 2 } else { rows };
        write_file(&path, k as i64 * 1000, rows, rg_rows, ndv, k != 7);
    }
}

/// Values present in some files and absent from all.
fn values() -> Vec<String> {
    let mut v: Vec<String> = (0..12).map(|k| (k * 1000 + 5).to_string()).collect();
    v.extend((0..30).map(|k| (900_000 + k * 7919).to_string()));
    v
}

/// Probes with and without the index must print the same and exit the same; returns the
/// `--stats` line of the index run.
fn same_as_direct(dir: &str, column: &str, vals: &[&str], extra: &[&str]) -> String {
    let mut args = vec!["probe", dir, column];
    args.extend_from_slice(vals);
    args.extend_from_slice(extra);
    let with = sbbf(&args);
    let mut no = args.clone();
    no.push("--no-index");
    let without = sbbf(&no);
    assert_eq!(
        text(&with.stdout),
        text(&without.stdout),
        "probe {args:?} differs with the index; stderr: {}",
        text(&with.stderr)
    );
    assert_eq!(with.status.code(), without.status.code(), "{args:?}");
    let mut st = args.clone();
    st.push("--stats");
    let o = sbbf(&st);
    text(&o.stdout)
        .lines()
        .find(|l| l.starts_with("index: "))
        .unwrap_or_default()
        .to_string()
}

fn answered(stats: &str) -> usize {
    stats
        .strip_prefix("index: ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no index figures in {stats:?}"))
}

/// Builds the index of `dir` once every file is older than the racy window (so all are
/// covered).
fn build(dir: &str, extra: &[&str]) -> serde_json::Value {
    sbbf_testkit::settle(Path::new(dir));
    let mut args = vec!["index", "build", dir, "--format", "json"];
    args.extend_from_slice(extra);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Files a direct probe says are absent in every row group for every value (each row group with
/// a filter), from its JSON lines: what an exact index must answer.
fn absent_everywhere(dir: &str, column: &str, vals: &[&str]) -> usize {
    let mut args = vec!["probe", dir, column, "--format", "json", "--no-index"];
    args.extend_from_slice(vals);
    let o = sbbf(&args);
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|j| {
            j["row_groups"].as_array().is_some_and(|rgs| {
                rgs.iter().all(|rg| {
                    rg["filter"] == "present"
                        && rg["values"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .all(|v| v["result"] == "absent")
                })
            }) && j.get("error").is_none()
                && j["physical_type"].is_string()
        })
        .count()
}

#[test]
fn index_answers_equal_direct_probes() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 30);
    let d = dir.to_str().unwrap();
    let r = build(d, &[]);
    assert_eq!(r["files"], 30);
    assert_eq!(r["files_read"], 30);
    // Filters of three sizes: three groups per column.
    let id = r["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == "id")
        .unwrap();
    assert_eq!(id["groups"].as_array().unwrap().len(), 3, "{id}");
    assert_eq!(id["folded"], 0);

    let vals = values();
    for v in &vals {
        for col in ["id", "name"] {
            let value = if col == "name" {
                format!("name-{v}")
            } else {
                v.clone()
            };
            let stats = same_as_direct(d, col, &[&value], &[]);
            // Exact index (every entry its file's own filter): it answers every file it covers,
            // those a direct probe finds absent and those it finds "maybe" alike; only files it
            // does not cover are read.
            assert!(
                stats.contains("(0 new, 0 changed, ") && stats.contains(" not covered, 0 maybe)"),
                "{col} = {value}: {stats}"
            );
            assert!(answered(&stats) >= absent_everywhere(d, col, &[&value]));
        }
    }
    let all: Vec<&str> = vals.iter().map(String::as_str).collect();
    same_as_direct(d, "id", &all, &[]);
    same_as_direct(d, "id", &all[..5], &["--format", "json"]);
    same_as_direct(d, "id", &all[10..20], &["--row-groups"]);
    // One absent value: most files are answered by the index.
    let stats = same_as_direct(d, "id", &["123456789"], &[]);
    assert!(answered(&stats) >= 28, "{stats}");
    // A value that does not parse for the column is the direct probe's error, exit 2.
    same_as_direct(d, "id", &["not-a-number"], &[]);
    // A column no file has.
    same_as_direct(d, "nope", &["1"], &[]);
}

#[test]
fn folded_index_never_rules_out_a_maybe() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 24);
    let d = dir.to_str().unwrap();
    let r = build(d, &["--fpp", "0.2", "-c", "id"]);
    let cols = r["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 1);
    assert!(cols[0]["folded"].as_u64().unwrap() > 0, "{r}");
    for g in cols[0]["groups"].as_array().unwrap() {
        assert!(g["max_fpp"].as_f64().unwrap() <= 0.2, "{g}");
    }
    for v in values() {
        // Folded entries: their "absent" is the file's, their "maybe" may be the fold's, so a
        // file with a folded "maybe" is read (and its own filter may still rule it out).
        // The output (compared with --no-index) is what shows no "maybe" was lost.
        same_as_direct(d, "id", &[&v], &[]);
    }
    // The string column is not in the index: every file probed directly, same output.
    let stats = same_as_direct(d, "name", &["name-5"], &[]);
    assert_eq!(answered(&stats), 0);
}

#[test]
fn stale_files_and_damaged_indexes_answer_as_direct_probes() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 20);
    let d = dir.to_str().unwrap();
    build(d, &[]);
    let index = dir.join("_sbbf_index/index.sbbfi");
    let good = std::fs::read(&index).unwrap();

    // New file with a new value; a file rewritten with another value; a file deleted.
    write_file(&dir.join("g-new.parquet"), 777_000, 30, 30, 64, true);
    write_file(&dir.join("f001.parquet"), 555_000, 40, 40, 64, true);
    std::fs::remove_file(dir.join("f002.parquet")).unwrap();
    for v in ["777005", "555005", "1005", "2005", "3005", "99999999"] {
        let stats = same_as_direct(d, "id", &[v], &[]);
        assert!(stats.contains("1 new, 1 changed"), "{stats}");
    }
    let o = sbbf(&["index", "inspect", d, "--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["stale"], serde_json::json!(["f001.parquet"]));
    assert_eq!(j["missing"], serde_json::json!(["g-new.parquet"]));
    assert_eq!(j["gone"], serde_json::json!(["f002.parquet"]));

    // Damage: each is ignored with one warning, and the output is the direct probe's.
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() - 7].to_vec()),
        ("empty", Vec::new()),
        ("foreign bytes", b"PAR1 not an index at all".repeat(10)),
    ];
    let mut flipped_dir = good.clone();
    let n = flipped_dir.len();
    flipped_dir[n - 60] ^= 0x10;
    cases.push(("flipped directory byte", flipped_dir));
    let mut flipped_trailer = good.clone();
    flipped_trailer[n - 30] ^= 0x01;
    cases.push(("flipped trailer byte", flipped_trailer));
    for (what, bytes) in cases {
        std::fs::write(&index, &bytes).unwrap();
        let o = sbbf(&["probe", d, "id", "99999999"]);
        let err = text(&o.stderr);
        assert_eq!(err.matches("warning").count(), 1, "{what}: {err}");
        same_as_direct(d, "id", &["99999999", "1005"], &[]);
    }
    // Every single byte of the stripes flipped in turn: answers stay right (a stripe that is
    // read fails its checksum; one that is not read does not matter).
    for k in (16..n / 2).step_by(97) {
        let mut b = good.clone();
        b[k] ^= 0x04;
        std::fs::write(&index, &b).unwrap();
        same_as_direct(d, "id", &["99999999"], &[]);
    }

    // Another table's index in place: its files do not match this table's.
    let other = td.path().join("other");
    make_table(&other, 5);
    build(other.to_str().unwrap(), &[]);
    std::fs::copy(other.join("_sbbf_index/index.sbbfi"), &index).unwrap();
    for v in ["1005", "99999999", "4005"] {
        same_as_direct(d, "id", &[v], &[]);
    }
}

/// Runs a system command (coreutils, tar) as a user would, failing the test on error.
fn run_tool(tool: &str, args: &[&str], cwd: &Path) {
    let o = Command::new(tool)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("{tool} is needed by this test: {e}"));
    assert!(o.status.success(), "{tool} {args:?}: {}", text(&o.stderr));
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// One value the new content of `file` holds: the probe with the index must say "maybe" for
/// that file (as the direct probe does), and `sbbf query` must count its row.
fn holds(dir: &str, file: &str, value: &str) {
    same_as_direct(dir, "id", &[value], &[]);
    let o = sbbf(&["probe", dir, "id", value, "-l"]);
    assert!(
        text(&o.stdout).lines().any(|l| l.ends_with(file)),
        "{file} holds {value}, the probe with the index lists: {}; stderr: {}",
        text(&o.stdout),
        text(&o.stderr)
    );
    #[cfg(feature = "query")]
    {
        let sql = format!("SELECT count(*) AS n FROM t WHERE id = {value}");
        let o = sbbf(&["query", dir, &sql, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let j: serde_json::Value =
            serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
        assert_eq!(j["n"], 1, "query of {value} beside the index: {j}");
    }
}

/// A file's content changed while its size and modification time stayed (restored with its
/// old time by `cp -p`, `touch -r` or `tar x`, or two same-size files swapped with `mv`, or
/// another table's index copied in beside files of the same names, sizes and times): never
/// answered with the old file's filters (the index once said "absent" for values the files
/// hold, and `sbbf query` returned 0 rows).
#[test]
fn restored_swapped_and_foreign_files_are_never_answered_from_the_index() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    std::fs::create_dir_all(&dir).unwrap();
    let spare = td.path().join("spare");
    std::fs::create_dir_all(&spare).unwrap();
    // Ids of one width and one count: files of the same size, different values.
    let file = |name: &str, first: i64| {
        let p = dir.join(name);
        write_file(&p, first, 50, 50, 64, true);
        p
    };
    let a = file("a.parquet", 100_000);
    let b = file("b.parquet", 200_000);
    file("c.parquet", 300_000);
    let x = spare.join("x.parquet");
    write_file(&x, 400_000, 50, 50, 64, true);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&a) == size(&b) && size(&a) == size(&x), "same sizes");
    let d = dir.to_str().unwrap();
    let (ap, xp) = (a.to_str().unwrap(), x.to_str().unwrap());
    let rebuild = || {
        build(d, &[]);
        let o = sbbf(&["index", "inspect", d, "--format", "json"]);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["covered"], 3, "{j}");
    };
    rebuild();

    // `cp -p`: another file's bytes written over a.parquet (same inode), its time restored.
    let before = mtime(&a);
    run_tool("touch", &["-r", ap, xp], td.path());
    run_tool("cp", &["-p", xp, ap], td.path());
    assert_eq!((mtime(&a), size(&a)), (before, size(&b)));
    holds(d, "a.parquet", "400005");

    // `touch -r`: rewritten in place, then its old time set back.
    rebuild();
    let keep = spare.join("times");
    run_tool("touch", &["-r", ap, keep.to_str().unwrap()], td.path());
    let before = mtime(&a);
    write_file(&a, 500_000, 50, 50, 64, true);
    run_tool("touch", &["-r", keep.to_str().unwrap(), ap], td.path());
    assert_eq!(mtime(&a), before);
    holds(d, "a.parquet", "500005");

    // `tar x`: a.parquet restored from an archive of other content with the same time (whole
    // seconds, as a tar archive keeps them).
    let whole = mtime(&a)
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(whole))
        .unwrap();
    rebuild();
    let stage = spare.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    let staged = stage.join("a.parquet");
    write_file(&staged, 600_000, 50, 50, 64, true);
    run_tool("touch", &["-r", ap, staged.to_str().unwrap()], td.path());
    run_tool("tar", &["cf", "../a.tar", "a.parquet"], &stage);
    let before = mtime(&a);
    run_tool("tar", &["xf", spare.join("a.tar").to_str().unwrap()], &dir);
    assert_eq!(mtime(&a), before);
    holds(d, "a.parquet", "600005");

    // `mv`: a.parquet and b.parquet swapped; each keeps its size and time.
    rebuild();
    run_tool("mv", &["a.parquet", "swap.tmp"], &dir);
    run_tool("mv", &["b.parquet", "a.parquet"], &dir);
    run_tool("mv", &["swap.tmp", "b.parquet"], &dir);
    holds(d, "a.parquet", "200005");
    holds(d, "b.parquet", "600005");

    // Another table's index beside files of the same names, sizes and times.
    rebuild();
    let other = td.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    // Its a.parquet: the same name, size and time as this table's, other content.
    let oa = other.join("a.parquet");
    std::fs::copy(&x, &oa).unwrap();
    run_tool("touch", &["-r", ap, oa.to_str().unwrap()], td.path());
    assert_eq!((size(&oa), mtime(&oa)), (size(&a), mtime(&a)));
    let o = other.to_str().unwrap();
    std::fs::create_dir_all(other.join("_sbbf_index")).unwrap();
    std::fs::copy(
        dir.join("_sbbf_index/index.sbbfi"),
        other.join("_sbbf_index/index.sbbfi"),
    )
    .unwrap();
    holds(o, "a.parquet", "400005");
}

#[test]
fn update_reads_only_new_and_changed_files() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 15);
    let d = dir.to_str().unwrap();
    build(d, &[]);
    for k in 0..4 {
        write_file(
            &dir.join(format!("z{k}.parquet")),
            600_000 + k * 1000,
            30,
            30,
            64,
            true,
        );
    }
    write_file(&dir.join("f003.parquet"), 444_000, 40, 40, 300, true);
    std::fs::remove_file(dir.join("part=1/f004.parquet")).unwrap();
    sbbf_testkit::settle(&dir);
    let o = sbbf(&["index", "update", d, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files"], 18, "{r}");
    assert_eq!(r["files_read"], 5, "{r}");
    assert_eq!(r["files_kept"], 13, "{r}");
    assert_eq!(r["files_gone"], 1, "{r}");
    // After the update every file is covered again and answers equal direct probes.
    let o = sbbf(&["index", "inspect", d, "--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["covered"], 18, "{j}");
    for v in ["600005", "444005", "5005", "3005", "99999999", "602010"] {
        let stats = same_as_direct(d, "id", &[v], &[]);
        assert!(stats.contains("0 new, 0 changed"), "{stats}");
        // Every covered file is answered by the index, "maybe" or not.
        assert!(stats.contains(" 0 not covered, 0 maybe)"), "{stats}");
        assert_eq!(answered(&stats), 18, "{stats}");
    }
    // An update with nothing changed reads nothing.
    let o = sbbf(&["index", "update", d, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files_read"], 0, "{r}");
    // The kept entries' bytes are the old ones: a rebuild gives the same index but its time.
    let updated = std::fs::read(dir.join("_sbbf_index/index.sbbfi")).unwrap();
    build(d, &[]);
    let rebuilt = std::fs::read(dir.join("_sbbf_index/index.sbbfi")).unwrap();
    assert_eq!(updated.len(), rebuilt.len());
}

#[test]
fn not_a_table_root() {
    let o = sbbf(&["index", "build", "no/such/dir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a table root"),
        "{}",
        text(&o.stderr)
    );
    let td = tempfile::tempdir().unwrap();
    make_table(td.path(), 2);
    let o = sbbf(&["index", "inspect", td.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no index"), "{}", text(&o.stderr));
}

// pyarrow datasets, pyarrow.parquet, DuckDB and Spark reading the same rows beside an index:
// tools/interop/index_readers.py (run by tools/interop/interop.sh, which sets up their venv).

#[cfg(feature = "object_store")]
fn sbbf_s3(moto: &sbbf_testkit::moto::Moto, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sbbf"));
    c.args(args);
    for (k, v) in moto.env() {
        c.env(k, v);
    }
    c.output().expect("run sbbf")
}

/// The same on the S3 test server: build with one PUT, probe with the index's few reads,
/// update reading only the new object, a damaged index ignored with a warning.
#[test]
#[cfg(feature = "object_store")]
fn s3_index_answers_equal_direct_probes() {
    let moto = sbbf_testkit::moto::Moto::start();
    moto.create_bucket("idx");
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 20);
    let n = moto.upload_dir("idx", "t", &dir).len()
        + moto
            .upload_dir("idx", "t/part=1", &dir.join("part=1"))
            .len();
    assert_eq!(n, 20);
    let url = "s3://idx/t/";
    let o = sbbf_s3(&moto, &["index", "build", url, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files_read"], 20, "{r}");

    let same = |vals: &[&str]| -> String {
        let mut args = vec!["probe", url, "id"];
        args.extend_from_slice(vals);
        let mut no = args.clone();
        no.push("--no-index");
        let (with, without) = (sbbf_s3(&moto, &args), sbbf_s3(&moto, &no));
        assert_eq!(
            text(&with.stdout),
            text(&without.stdout),
            "{vals:?}: {}",
            text(&with.stderr)
        );
        assert_eq!(with.status.code(), without.status.code());
        args.push("--stats");
        let o = sbbf_s3(&moto, &args);
        text(&o.stdout)
            .lines()
            .find(|l| l.starts_with("index: "))
            .unwrap_or_default()
            .to_string()
    };
    for v in ["5", "3005", "19005", "99999999", "name-5"] {
        same(&[v]);
    }
    let stats = same(&["99999999"]);
    assert!(answered(&stats) >= 18, "{stats}");
    // The listing and the index's end in one wave: an index of 20 files is smaller than the
    // first read (16 KiB), so head, file table, columns and stripes all come with it.
    assert!(stats.contains("index 1 request(s)"), "{stats}");

    // A new object: not covered until the update, which reads only it.
    let extra = td.path().join("x");
    std::fs::create_dir_all(&extra).unwrap();
    write_file(&extra.join("new.parquet"), 888_000, 30, 30, 64, true);
    moto.upload_dir("idx", "t", &extra);
    let stats = same(&["888005"]);
    assert!(stats.contains("1 new"), "{stats}");
    let o = sbbf_s3(&moto, &["index", "update", url, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (r["files_read"].as_u64(), r["files_kept"].as_u64()),
        (Some(1), Some(20)),
        "{r}"
    );
    let stats = same(&["888005"]);
    assert!(stats.contains("0 new"), "{stats}");
    let o = sbbf_s3(&moto, &["index", "inspect", url, "--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["covered"], 21, "{j}");

    // A damaged index: one warning, the direct probe's answers.
    // (moto refuses unsigned overwrites: a signed PUT through the store client.)
    use object_store::ObjectStoreExt as _;
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(moto.endpoint())
        .with_allow_http(true)
        .with_bucket_name("idx")
        .with_access_key_id(sbbf_testkit::moto::KEY)
        .with_secret_access_key(sbbf_testkit::moto::SECRET)
        .with_region(sbbf_testkit::moto::REGION)
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(store.put(
        &object_store::path::Path::from("t/_sbbf_index/index.sbbfi"),
        b"not an index".to_vec().into(),
    ))
    .unwrap();
    let o = sbbf_s3(&moto, &["probe", url, "id", "5"]);
    assert_eq!(
        text(&o.stderr).matches("warning").count(),
        1,
        "{}",
        text(&o.stderr)
    );
    same(&["5", "99999999"]);
}

/// A file changed just before the build is not covered (a second change in the same clock
/// tick would not show): it is probed directly, and the next update reads it.
#[test]
fn files_modified_just_before_the_build_are_not_covered() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 6);
    sbbf_testkit::settle(&dir);
    let fresh = dir.join("f001.parquet");
    std::fs::File::options()
        .write(true)
        .open(&fresh)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let d = dir.to_str().unwrap();
    // Built at once (not through `build`, which would wait the change out).
    let o = sbbf(&["index", "build", d, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["racy"], 1, "{r}");
    let stats = same_as_direct(d, "id", &["99999999"], &[]);
    assert_eq!(answered(&stats), 5, "{stats}");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let o = sbbf(&["index", "update", d, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (r["files_read"].as_u64(), r["racy"].as_u64()),
        (Some(1), Some(0)),
        "{r}"
    );
    let stats = same_as_direct(d, "id", &["99999999"], &[]);
    assert_eq!(answered(&stats), 6, "{stats}");
}

/// DataFusion listing tables (`sbbf query`, with our pruning and without) count the same rows
/// beside an index, the directory named with and without its trailing `/`, subfolders listed
/// or not.
#[cfg(feature = "query")]
#[test]
fn datafusion_ignores_the_index() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 10);
    let d = dir.to_str().unwrap();
    build(d, &[]);
    let rows: usize = (0..10).map(|k| 40 + (k % 7) * 10).sum();
    let slash = format!("{d}/");
    for path in [d, slash.as_str()] {
        for extra in [&[][..], &["--no-sbbf"][..]] {
            for subdirs in ["true", "false"] {
                let mut args = vec![
                    "query",
                    path,
                    "SELECT count(*) AS n FROM t",
                    "--format",
                    "json",
                ];
                args.extend_from_slice(extra);
                let o = Command::new(env!("CARGO_BIN_EXE_sbbf"))
                    .args(&args)
                    .env(
                        "DATAFUSION_EXECUTION_LISTING_TABLE_IGNORE_SUBDIRECTORY",
                        subdirs,
                    )
                    .output()
                    .unwrap();
                assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
                let j: serde_json::Value =
                    serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
                // With subfolders ignored, the files in part=1/ still count (a partition).
                assert_eq!(j["n"], rows as u64, "{args:?} subdirs ignored: {subdirs}");
            }
        }
    }
}

/// Files without the column (schema evolution) are answered from the index as a direct probe
/// of a table reports them ("column not in this file"), when some other covered file has it.
#[test]
fn files_without_the_column_are_answered_from_the_index() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 8);
    for k in 0..4 {
        let path = dir.join(format!("old{k}.parquet"));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "other",
            DataType::Int64,
            false,
        )]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(k * 100..k * 100 + 50)) as ArrayRef],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .build();
        let f = std::fs::File::create(&path).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    let d = dir.to_str().unwrap();
    build(d, &[]);
    let stats = same_as_direct(d, "id", &["99999999"], &[]);
    assert_eq!(answered(&stats), 12, "{stats}");
    same_as_direct(d, "id", &["99999999"], &["--format", "json"]);
    same_as_direct(d, "id", &["5", "1005"], &[]);
    let stats = same_as_direct(d, "other", &["99999999"], &[]);
    assert_eq!(answered(&stats), 12, "{stats}");
    same_as_direct(d, "other", &["105"], &["--format", "json"]);
    // A column no file has: the direct probe's message and exit status.
    same_as_direct(d, "zzz", &["1"], &[]);
}

/// Files of `dir` relative to it, as `sbbf index` records them.
fn relative_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                let rel = p.strip_prefix(dir).unwrap().to_str().unwrap();
                out.push(rel.replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// `sbbf index build --files-from --part` on three workers' shares, then `sbbf index merge`:
/// probes answer as after one `sbbf index build` (and as `--no-index`), with the same files
/// answered by the index.
#[test]
fn index_built_in_parts_equals_one_build() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 30);
    let d = dir.to_str().unwrap();
    let files = relative_files(&dir);
    assert_eq!(files.len(), 30);
    let probes: Vec<(&str, String)> = values()
        .into_iter()
        .step_by(3)
        .flat_map(|v| [("id", v.clone()), ("name", format!("name-{v}"))])
        .collect();
    build(d, &[]);
    let one: Vec<String> = probes
        .iter()
        .map(|(c, v)| same_as_direct(d, c, &[v], &[]))
        .collect();
    std::fs::remove_file(dir.join("_sbbf_index/index.sbbfi")).unwrap();

    let parts = td.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    let mut reported = 0;
    for k in 0..3 {
        let share: Vec<&str> = files
            .iter()
            .skip(k)
            .step_by(3)
            .map(String::as_str)
            .collect();
        let list = td.path().join(format!("list{k}.txt"));
        std::fs::write(&list, share.join("\n") + "\n").unwrap();
        let out = parts.join(format!("w{k}.sbbfpart"));
        let args = [
            "index",
            "build",
            d,
            "--files-from",
            list.to_str().unwrap(),
            "--part",
            out.to_str().unwrap(),
            "--format",
            "json",
        ];
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["files_read"], share.len(), "{r}");
        reported += share.len();
        // Nothing is written under the table by a part's build.
        assert!(!dir.join("_sbbf_index/index.sbbfi").exists());
    }
    assert_eq!(reported, 30);
    let o = sbbf(&[
        "index",
        "merge",
        d,
        parts.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (r["parts"].as_u64(), r["files_covered"].as_u64()),
        (Some(3), Some(30)),
        "{r}"
    );
    let merged: Vec<String> = probes
        .iter()
        .map(|(c, v)| same_as_direct(d, c, &[v], &[]))
        .collect();
    // The --stats lines differ only in byte counts of the directory read; the files answered
    // by the index are the same.
    for ((p, a), b) in probes.iter().zip(&one).zip(&merged) {
        assert_eq!(answered(a), answered(b), "{p:?}: {a} / {b}");
    }
    let o = sbbf(&["index", "inspect", d, "--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["covered"], 30, "{j}");

    // Parts that do not belong together: refused with the reason, nothing written.
    std::fs::remove_file(dir.join("_sbbf_index/index.sbbfi")).unwrap();
    let list = td.path().join("list0.txt");
    let other = td.path().join("c-id.sbbfpart");
    let o = sbbf(&[
        "index",
        "build",
        d,
        "-c",
        "id",
        "--files-from",
        list.to_str().unwrap(),
        "--part",
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let w1 = parts.join("w1.sbbfpart");
    let o = sbbf(&[
        "index",
        "merge",
        d,
        other.to_str().unwrap(),
        w1.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("parts refused") && err.contains("-c id"),
        "{err}"
    );
    // The same part twice covers its files twice.
    let w0 = parts.join("w0.sbbfpart");
    let o = sbbf(&[
        "index",
        "merge",
        d,
        w0.to_str().unwrap(),
        w0.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("is in both"),
        "{}",
        text(&o.stderr)
    );
    assert!(!dir.join("_sbbf_index/index.sbbfi").exists());
    // A file that is not in the table.
    let o = sbbf(&[
        "index",
        "build",
        d,
        "--files-from",
        "-",
        "--part",
        "x.sbbfpart",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // --part without --files-from is a usage error.
    let o = sbbf(&["index", "build", d, "--part", "x.sbbfpart"]);
    assert_eq!(o.status.code(), Some(2));
    let help = text(&sbbf(&["index", "merge", "--help"]).stdout);
    assert!(help.contains("sbbf index merge data/ parts/"), "{help}");
}

/// `--build-missing` builds the filters `name` lacks in f007 (and only those), and needs -c.
#[test]
fn build_missing_builds_only_what_lacks_a_filter() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 10);
    let d = dir.to_str().unwrap();
    let plain = build(d, &["-c", "name"]);
    let r = build(d, &["-c", "name", "--build-missing"]);
    // f007 has no filter on `name`; it has one row group (7 % 4 != 0).
    assert_eq!(r["filters_built"], 1, "{r}");
    assert_eq!(r["data_requests"], 1, "{r}");
    let extra = r["bytes_read"].as_u64().unwrap() - plain["bytes_read"].as_u64().unwrap();
    assert_eq!(extra, r["data_bytes"].as_u64().unwrap());
    // f007 holds name-7005: found; answered from the index for an absent name.
    let o = sbbf(&["probe", d, "name", "name-7005"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let f007 = text(&o.stdout);
    assert!(f007.contains("f007.parquet"), "{f007}");
    let o = sbbf(&["probe", d, "name", "name-7005", "--stats"]);
    let stats = text(&o.stdout);
    let line = stats.lines().find(|l| l.starts_with("index: ")).unwrap();
    assert!(answered(line) >= 8, "{line}");
    let o = sbbf(&["index", "build", d, "--build-missing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("-c COLUMN"), "{}", text(&o.stderr));
}

/// `--tighten --fpp P` builds again from data the entries whose file's filter is looser than
/// P, and needs -c and --fpp; a probe through the index still finds every stored value.
#[test]
fn tighten_builds_looser_filters_again_at_the_target() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 6);
    let d = dir.to_str().unwrap();
    let r = build(d, &["-c", "name", "--fpp", "0.00001", "--tighten"]);
    let tightened = r["filters_tightened"].as_u64().unwrap();
    assert!(tightened > 0, "{r}");
    assert!(r["data_requests"].as_u64().unwrap() >= tightened, "{r}");
    for g in r["columns"][0]["groups"].as_array().unwrap() {
        assert!(g["max_fpp"].as_f64().unwrap() <= 0.0001, "{r}");
    }
    for k in 0..6 {
        let o = sbbf(&["probe", d, "name", &format!("name-{}", k * 1000 + 5), "-l"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(&format!("f{k:03}.parquet")),
            "{}",
            text(&o.stdout)
        );
    }
    let o = sbbf(&["index", "build", d, "-c", "name", "--tighten"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--fpp"), "{}", text(&o.stderr));
    let o = sbbf(&["index", "build", d, "--fpp", "0.001", "--tighten"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("-c COLUMN"), "{}", text(&o.stderr));
}

/// Parts and `--build-missing` on the S3 test server: parts built over an object-store root,
/// merged with one PUT, answer as `--no-index`; the one file without a filter on `name` gets
/// one built from its chunk's pages (one ranged GET of exactly those bytes).
#[test]
#[cfg(feature = "object_store")]
fn s3_parts_and_build_missing() {
    let moto = sbbf_testkit::moto::Moto::start();
    moto.create_bucket("pxs");
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 12);
    moto.upload_dir("pxs", "t", &dir);
    moto.upload_dir("pxs", "t/part=1", &dir.join("part=1"));
    let url = "s3://pxs/t/";
    let files = relative_files(&dir);
    let mut parts = Vec::new();
    for (k, share) in [&files[..5], &files[5..]].iter().enumerate() {
        let list = td.path().join(format!("s{k}.txt"));
        std::fs::write(&list, share.join("\n")).unwrap();
        let out = td.path().join(format!("s{k}.sbbfpart"));
        let args = ["index", "build", url, "-c", "name", "--build-missing"];
        let mut args = args.to_vec();
        args.extend(["--files-from", list.to_str().unwrap()]);
        args.extend(["--part", out.to_str().unwrap(), "--format", "json"]);
        let o = sbbf_s3(&moto, &args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // f007 (without a filter on `name`) is in the second share.
        let built = if k == 1 { 1 } else { 0 };
        assert_eq!(r["filters_built"], built, "{r}");
        assert_eq!(r["data_requests"], built, "{r}");
        parts.push(out.to_str().unwrap().to_string());
    }
    let mut args = vec!["index", "merge", url];
    args.extend(parts.iter().map(String::as_str));
    args.extend(["--format", "json"]);
    let o = sbbf_s3(&moto, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files_covered"], 12, "{r}");
    // Every file is covered for `name`, f007 too (its built filter): only false positives
    // are read directly for an absent name.
    let o = sbbf_s3(&moto, &["probe", url, "name", "name-99999999", "--stats"]);
    let shown = text(&o.stdout);
    let line = shown.lines().find(|l| l.starts_with("index: ")).unwrap();
    assert!(
        line.contains("0 not covered") && answered(line) >= 8,
        "{line}"
    );
    // Present values are found where they are, as without the index.
    for v in ["name-7005", "name-3005", "name-11005"] {
        let with = sbbf_s3(&moto, &["probe", url, "name", v, "--format", "json"]);
        let without = sbbf_s3(
            &moto,
            &["probe", url, "name", v, "--format", "json", "--no-index"],
        );
        let maybe_in = |o: &Output| -> Vec<String> {
            text(&o.stdout)
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|j| {
                    j["row_groups"].as_array().is_some_and(|rgs| {
                        rgs.iter().any(|rg| rg["values"][0]["result"] != "absent")
                    })
                })
                .map(|j| j["file"].as_str().unwrap().to_string())
                .collect()
        };
        let (a, b) = (maybe_in(&with), maybe_in(&without));
        // The index may rule out f007's row groups without the value; the file holding it
        // is "maybe" both ways.
        let holder = format!("f{:03}.parquet", v[5..].parse::<usize>().unwrap() / 1000);
        assert!(a.iter().any(|f| f.ends_with(&holder)), "{v}: {a:?}");
        assert!(a.iter().all(|f| b.contains(f)), "{v}: {a:?} vs {b:?}");
    }
}

/// `-c` a misspelt column, or one no file has a filter for: refused with the reason (and the
/// near miss), the good index left as it was (it once exited 0 and wrote an empty index).
#[test]
fn a_misspelt_or_filterless_column_refuses_the_build_and_keeps_the_index() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    std::fs::create_dir_all(&dir).unwrap();
    for k in 0..3 {
        // `name` without a filter in every file.
        write_file(
            &dir.join(format!("f{k}.parquet")),
            k * 1000,
            40,
            40,
            64,
            false,
        );
    }
    let d = dir.to_str().unwrap();
    build(d, &[]);
    let index = dir.join("_sbbf_index/index.sbbfi");
    let good = std::fs::read(&index).unwrap();
    for (col, says) in [
        ("idd", "did you mean `id`?"),
        (
            "name",
            "no file of the table has a Bloom filter for column `name`",
        ),
    ] {
        let o = sbbf(&["index", "build", d, "-c", col]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "-c {col}: {err}");
        assert!(
            err.contains(says) && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(&index).unwrap(),
            good,
            "-c {col} changed the index"
        );
    }
    let o = sbbf(&["index", "build", d, "-c", "name"]);
    assert!(
        text(&o.stderr).contains("--build-missing"),
        "{}",
        text(&o.stderr)
    );
    // A column some file has filters for is indexed as before; one that needs them built too.
    let r = build(d, &["-c", "id"]);
    assert_eq!(r["files_read"], 3, "{r}");
    let r = build(d, &["-c", "name", "--build-missing"]);
    assert_eq!(r["filters_built"], 3, "{r}");
}

/// A `*.parquet` link to nothing is one error line: the rest of the table is indexed,
/// updated, inspected and answered from the index.
#[cfg(unix)]
#[test]
fn a_link_to_nothing_is_one_error_and_the_rest_is_answered() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 6);
    let d = dir.to_str().unwrap();
    build(d, &[]);
    std::os::unix::fs::symlink(dir.join("nowhere.parquet"), dir.join("ghost.parquet")).unwrap();
    // The index built before the link appeared still answers the other files.
    let o = sbbf(&["probe", d, "id", "99999999", "--stats"]);
    let err = text(&o.stderr);
    assert_eq!(err.matches("ghost.parquet").count(), 1, "{err}");
    let stats = text(&o.stdout);
    let line = stats.lines().find(|l| l.starts_with("index: ")).unwrap();
    assert_eq!(answered(line), 6, "{stats}");
    same_as_direct(d, "id", &["99999999", "1005"], &[]);
    for cmd in ["build", "update"] {
        let o = sbbf(&["index", cmd, d, "--format", "json"]);
        let err = text(&o.stderr);
        assert_eq!(err.matches("ghost.parquet").count(), 1, "{cmd}: {err}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["files"], 7, "{cmd}: {r}");
    }
    let o = sbbf(&["index", "inspect", d, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["covered"], 6, "{j}");
    assert_eq!(j["stale"], serde_json::json!([]), "{j}");
    let o = sbbf(&["probe", d, "id", "99999999", "--stats"]);
    assert!(
        text(&o.stdout).contains("0 changed, 1 not covered"),
        "{}",
        text(&o.stdout)
    );
}

/// The index gets the mode the umask gives a new file (it was always 0600, so other accounts
/// reading the table could not read it), and an update keeps the mode of the one it replaces.
#[cfg(unix)]
#[test]
fn the_index_has_the_umask_mode_and_an_update_keeps_it() {
    use std::os::unix::fs::PermissionsExt;
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 3);
    sbbf_testkit::settle(&dir);
    let d = dir.to_str().unwrap();
    let index = dir.join("_sbbf_index/index.sbbfi");
    let mode = || std::fs::metadata(&index).unwrap().permissions().mode() & 0o777;
    let with_umask = |umask: &str, cmd: &str| {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" index {cmd} \"$1\""))
            .arg(env!("CARGO_BIN_EXE_sbbf"))
            .arg(d)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    };
    with_umask("022", "build");
    assert_eq!(mode(), 0o644);
    with_umask("077", "build");
    assert_eq!(
        mode(),
        0o644,
        "a rebuild keeps the mode of the index it replaces"
    );
    std::fs::set_permissions(&index, std::fs::Permissions::from_mode(0o640)).unwrap();
    with_umask("022", "update");
    assert_eq!(mode(), 0o640);
    std::fs::remove_file(&index).unwrap();
    with_umask("027", "build");
    assert_eq!(mode(), 0o640);
}

/// Two writers of one index at once: the second is refused with the reason (the last one
/// used to win silently), and goes through once the first is done.
#[test]
fn a_second_writer_of_the_index_is_refused() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    make_table(&dir, 3);
    let d = dir.to_str().unwrap();
    build(d, &[]);
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("_sbbf_index/.lock"))
        .unwrap();
    held.try_lock().unwrap();
    for cmd in ["build", "update"] {
        let o = sbbf(&["index", cmd, d]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(
            text(&o.stderr).contains("another process is writing the index"),
            "{}",
            text(&o.stderr)
        );
    }
    // Probes do not wait for writers.
    same_as_direct(d, "id", &["1005"], &[]);
    drop(held);
    build(d, &[]);
}
