//! `sbbf add` and `sbbf resize`: data untouched, footer preserved, filters usable by arrow-rs.

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};

use crate::common::{repo, sbbf};
use serde_json::Value as Json;
use std::path::Path;

fn footer_start(file: &[u8]) -> usize {
    file.len()
        - 8
        - u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as usize
}

fn batches(p: &Path) -> Vec<arrow::record_batch::RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(p).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// Checks everything `add`/`resize` promise about `out` made from `input`. With
/// `prefix_identical`, the output starts with the input's bytes up to its footer, or (add
/// --replace) up to old filters that ended the body and were overwritten: no byte of data
/// pages or page indexes is among those. Returns where the output's own bytes start.
fn check_preserved(input: &Path, out: &Path, prefix_identical: bool) -> usize {
    let (a, b) = (std::fs::read(input).unwrap(), std::fs::read(out).unwrap());
    let ma = ParquetMetaDataReader::decode_metadata(&a[footer_start(&a)..a.len() - 8]).unwrap();
    let mb = ParquetMetaDataReader::decode_metadata(&b[footer_start(&b)..b.len() - 8]).unwrap();
    // The first new filter (an offset the input's footer does not give that chunk).
    let mut n = footer_start(&a);
    for (ra, rb) in ma.row_groups().iter().zip(mb.row_groups()) {
        for (ca, cb) in ra.columns().iter().zip(rb.columns()) {
            if let Some(o) = cb.bloom_filter_offset() {
                if ca.bloom_filter_offset() != Some(o) {
                    n = n.min(o as usize);
                }
            }
        }
    }
    if prefix_identical {
        assert!(
            b.len() > n && a[..n] == b[..n],
            "the bytes before the new filters changed"
        );
        for rg in ma.row_groups() {
            for c in rg.columns() {
                let (start, len) = c.byte_range();
                assert!((start + len) as usize <= n, "data pages were overwritten");
                for (o, l) in [
                    (c.column_index_offset(), c.column_index_length()),
                    (c.offset_index_offset(), c.offset_index_length()),
                ] {
                    if let (Some(o), Some(l)) = (o, l) {
                        assert!((o + l as i64) as usize <= n, "a page index was overwritten");
                    }
                }
            }
        }
    }
    assert_eq!(batches(input), batches(out), "data differs");
    assert_eq!(
        format!("{:?}", ma.file_metadata()),
        format!("{:?}", mb.file_metadata())
    );
    // Every stored value tests "maybe" in the new filters.
    let o = sbbf(&[
        "verify",
        out.to_str().unwrap(),
        "--format",
        "json",
        "--samples",
        "500",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    n
}

#[test]
fn add_to_files_of_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "pa_ints.parquet",
        "arrowrs_temporal.parquet",
        "duckdb_float_bytes.parquet",
        "spark_types.parquet",
        "spark_int96_legacy_nolength.parquet",
    ] {
        let input = repo().join("testdata").join(name);
        let out = dir.path().join(name);
        // Rebuild every non-boolean column's filters.
        let o = sbbf(&["inspect", input.to_str().unwrap(), "--format", "json"]);
        let j: Json = serde_json::from_slice(&o.stdout).unwrap();
        let mut cols: Vec<String> = j["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["physical_type"] != "BOOLEAN")
            .map(|c| c["column"].as_str().unwrap().to_string())
            .collect();
        cols.dedup();
        cols.sort();
        cols.dedup();
        let mut args = vec![
            "add",
            input.to_str().unwrap(),
            "--replace",
            "-o",
            out.to_str().unwrap(),
            "--format",
            "json",
        ];
        for c in &cols {
            args.extend(["-c", c.as_str()]);
        }
        let o = sbbf(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: Json = serde_json::from_slice(&o.stdout).unwrap();
        let written = r["bytes_written"].as_u64().unwrap();
        let kept = check_preserved(&input, &out, true) as u64;
        // Only the filters and the new footer are written, after the bytes kept.
        let tail = std::fs::metadata(&out).unwrap().len() - kept;
        assert_eq!(
            written, tail,
            "{name}: {written} written, {tail} after the kept bytes"
        );
        // arrow-rs reads every new filter and finds the stored values.
        let reader = SerializedFileReader::new_with_options(
            std::fs::File::open(&out).unwrap(),
            ReadOptionsBuilder::new()
                .with_reader_properties(
                    ReaderProperties::builder()
                        .set_read_bloom_filter(true)
                        .build(),
                )
                .build(),
        )
        .unwrap();
        let mut seen = 0;
        for rg in 0..reader.num_row_groups() {
            let rgr = reader.get_row_group(rg).unwrap();
            for c in 0..rgr.num_columns() {
                if let Some(bf) = rgr.get_column_bloom_filter(c) {
                    // The bitset arrow-rs read is the one we sized: under 5% estimated FPP.
                    let mut bits = Vec::new();
                    bf.write_bitset(&mut bits).unwrap();
                    let ours = ::sbbf::Sbbf::from_bitset(&bits).unwrap();
                    assert!(ours.estimated_fpp() < 0.05, "{name}: rg {rg} col {c}");
                    seen += 1;
                }
            }
        }
        assert!(seen >= cols.len(), "{name}: arrow-rs found {seen} filters");
    }
}

#[test]
fn add_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("testdata/pa_ints.parquet");
    let out = dir.path().join("o.parquet");
    let o = sbbf(&[
        "add",
        input.to_str().unwrap(),
        "-c",
        "i64",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--replace"));
    assert!(!out.exists(), "no output on failure");
    let o = sbbf(&[
        "add",
        input.to_str().unwrap(),
        "-c",
        "nope",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("i64"));
    // Neither -o nor --in-place: a usage error.
    assert_eq!(
        sbbf(&["add", input.to_str().unwrap(), "-c", "u8"])
            .status
            .code(),
        Some(2)
    );
    let o = sbbf(&[
        "add",
        input.to_str().unwrap(),
        "-c",
        "u8",
        "--fpp",
        "1.5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--fpp") && err.contains("1.5"), "{err}");
    // Encrypted input.
    let enc = dir.path().join("enc.parquet");
    let mut bytes = b"PAR1".to_vec();
    bytes.extend_from_slice(&[0; 64]);
    bytes.extend_from_slice(&64u32.to_le_bytes());
    bytes.extend_from_slice(b"PARE");
    std::fs::write(&enc, &bytes).unwrap();
    let o = sbbf(&[
        "add",
        enc.to_str().unwrap(),
        "-c",
        "x",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("encrypted"));
    // Nothing left behind in the output directory.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("enc.parquet")]);
}

#[test]
fn in_place_and_resize_give_back_space() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.parquet");
    let orig = repo().join("testdata/pa_temporal.parquet");
    std::fs::copy(&orig, &file).unwrap();
    // parquet-java's default: 1 MiB filters whatever the data. Simulate with a huge --ndv.
    let o = sbbf(&[
        "add",
        file.to_str().unwrap(),
        "-c",
        "date",
        "--replace",
        "--ndv",
        "800000",
        "--in-place",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let big = std::fs::metadata(&file).unwrap().len();
    // In place keeps the file's permissions (the temporary file it renames starts private).
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode,
            std::fs::metadata(&orig).unwrap().permissions().mode() & 0o777
        );
    }
    assert!(big > 4 * 1024 * 1024);
    check_preserved(&orig, &file, true);

    let small = dir.path().join("small.parquet");
    let o = sbbf(&[
        "resize",
        file.to_str().unwrap(),
        "--fpp",
        "0.01",
        "-o",
        small.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["compacted"].as_bool().unwrap());
    let after = std::fs::metadata(&small).unwrap().len();
    assert!(after < big / 10, "resize left {after} of {big} bytes");
    assert!(r["filter_bytes_after"].as_u64().unwrap() < r["filter_bytes_before"].as_u64().unwrap());
    check_preserved(&orig, &small, false);
    // Every filter now implies at most the target rate.
    let o = sbbf(&["inspect", small.to_str().unwrap(), "--format", "json"]);
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["problems"], 0);
    for c in j["chunks"].as_array().unwrap() {
        if c["column"] == "date" {
            assert!(c["estimated_fpp"].as_f64().unwrap() <= 0.01);
        }
    }
    // In place, nothing to shrink: the file is left alone.
    let before = std::fs::read(&small).unwrap();
    let o = sbbf(&[
        "resize",
        small.to_str().unwrap(),
        "--fpp",
        "0.01",
        "--in-place",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&small).unwrap(), before);
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether row group 0 of `column` has a filter, by inspect.
fn has_filter(file: &Path, column: &str) -> bool {
    let o = sbbf(&["inspect", file.to_str().unwrap(), "--format", "json"]);
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    j["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["column"] == column && c["row_group"] == 0 && c["has_filter"] == true)
}

#[test]
fn in_place_writes_through_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.parquet");
    let link = dir.path().join("link.parquet");
    std::fs::copy(repo().join("testdata/pa_ints.parquet"), &real).unwrap();
    std::os::unix::fs::symlink("real.parquet", &link).unwrap();
    assert!(!has_filter(&real, "u8"));
    let o = sbbf(&["add", link.to_str().unwrap(), "-c", "u8", "--in-place"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still a link"
    );
    assert!(has_filter(&real, "u8"), "the target got the filter");
}

#[test]
fn a_file_being_written_in_place_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.parquet");
    std::fs::copy(repo().join("testdata/pa_ints.parquet"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    // Another run holds the lock: this one fails and leaves the file alone.
    let held = std::fs::File::open(&file).unwrap();
    held.try_lock().unwrap();
    let o = sbbf(&["add", file.to_str().unwrap(), "-c", "u8", "--in-place"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("another process"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let o = sbbf(&[
        "resize",
        file.to_str().unwrap(),
        "--fpp",
        "0.01",
        "--in-place",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    drop(held);
    // Released: the run goes through. (A child another test forks in this process shares the
    // lock until it execs; on a loaded machine that moment can last, so retry while the lock
    // is what fails, up to a minute, rather than a fixed handful of tries.)
    let mut o = sbbf(&["add", file.to_str().unwrap(), "-c", "u8", "--in-place"]);
    for _ in 0..1200 {
        if o.status.code() != Some(2) || !stderr(&o).contains("another process") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        o = sbbf(&["add", file.to_str().unwrap(), "-c", "u8", "--in-place"]);
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn output_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("testdata/pa_ints.parquet");
    let out = dir.path().join("o.parquet");
    std::fs::write(&out, "precious").unwrap();
    let args = |force: bool| {
        let mut v = vec![
            "add".to_string(),
            input.to_str().unwrap().into(),
            "-c".into(),
            "u8".into(),
            "-o".into(),
            out.to_str().unwrap().into(),
        ];
        if force {
            v.push("--force".into());
        }
        v
    };
    let run = |force: bool| {
        let a = args(force);
        sbbf(&a.iter().map(|s| s.as_str()).collect::<Vec<_>>())
    };
    let o = run(false);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    let o = run(true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(has_filter(&out, "u8"));
}

#[test]
fn resize_with_nothing_to_fold_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Filters sized for their contents by `add`: nothing folds further at the same rate.
    let small = dir.path().join("small.parquet");
    let o = sbbf(&[
        "add",
        repo().join("testdata/pa_ints.parquet").to_str().unwrap(),
        "-c",
        "u8",
        "-o",
        small.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.path().join("out.parquet");
    let o = sbbf(&[
        "resize",
        small.to_str().unwrap(),
        "--fpp",
        "0.01",
        "-c",
        "u8",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("nothing to do"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_missing_or_directory_input_is_named_as_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.parquet");
    let missing = dir.path().join("missing.parquet");
    for cmd in ["add", "resize"] {
        let extra = if cmd == "add" {
            ["-c", "u8"]
        } else {
            ["--fpp", "0.01"]
        };
        for (input, want) in [
            (missing.to_str().unwrap(), "no such file"),
            (dir.path().to_str().unwrap(), "is a directory"),
        ] {
            let mut args = vec![cmd, input];
            args.extend(extra);
            args.extend(["-o", out.to_str().unwrap()]);
            let o = sbbf(&args);
            assert_eq!(o.status.code(), Some(2));
            let e = stderr(&o);
            assert!(
                e.contains(want) && !e.contains("write failed") && !e.contains("External"),
                "{cmd} {input}: {e}"
            );
        }
    }
}

#[test]
fn without_an_output_a_missing_path_or_a_plain_folder_is_said_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nosuchdir");
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    for (cmd, extra) in [("add", ["-c", "id"]), ("resize", ["--fpp", "0.01"])] {
        let mut args = vec![cmd, missing.to_str().unwrap()];
        args.extend(extra);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.contains("nosuchdir: no such file or directory") && !e.contains("-o NEW_FILE"),
            "{cmd}: {e}"
        );
        let mut args = vec![cmd, plain.to_str().unwrap()];
        args.extend(extra);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.contains("is a directory but not a Delta or Iceberg table")
                && e.contains(&format!("{cmd} takes one Parquet file"))
                && e.contains("--catalog")
                && !e.contains("say where the result goes"),
            "{cmd}: {e}"
        );
        assert_eq!(
            std::fs::read_dir(&plain).unwrap().count(),
            0,
            "nothing written"
        );
    }
}

/// A copy of a testdata file in a fresh folder (the folder is kept alive by the caller).
fn copy_in(dir: &Path, rel: &str) -> std::path::PathBuf {
    let file = dir.join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::copy(repo().join("testdata/pa_ints.parquet"), &file).unwrap();
    file
}

#[test]
fn data_files_of_lake_tables_are_never_rewritten_in_place() {
    // What marks each format's root: Delta's log, Iceberg's metadata files, Hudi's folder.
    let layouts: [(&str, &[&str], &str); 4] = [
        (
            "Delta",
            &["_delta_log/00000000000000000000.json"],
            "part-0.parquet",
        ),
        (
            "Iceberg",
            &["metadata/v1.metadata.json"],
            "data/id=1/f.parquet",
        ),
        ("Iceberg", &["metadata/version-hint.text"], "data/f.parquet"),
        ("Hudi", &[".hoodie/hoodie.properties"], "2024/01/f.parquet"),
    ];
    for (format, markers, rel) in layouts {
        let dir = tempfile::tempdir().unwrap();
        for m in markers {
            let m = dir.path().join(m);
            std::fs::create_dir_all(m.parent().unwrap()).unwrap();
            std::fs::write(&m, b"{}").unwrap();
        }
        let file = copy_in(dir.path(), rel);
        let before = std::fs::read(&file).unwrap();
        for args in [
            vec!["add", file.to_str().unwrap(), "-c", "u8", "--in-place"],
            vec![
                "resize",
                file.to_str().unwrap(),
                "--fpp",
                "0.1",
                "--in-place",
            ],
            vec![
                "add",
                file.to_str().unwrap(),
                "-c",
                "u8",
                "--in-place",
                "--force",
            ],
        ] {
            let o = sbbf(&args);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{format} {args:?}: {}",
                stderr(&o)
            );
            let msg = stderr(&o);
            assert!(msg.contains(format) && msg.contains("-o"), "{msg}");
            assert_eq!(
                std::fs::read(&file).unwrap(),
                before,
                "{format}: the file changed"
            );
        }
        // A new file beside the table is fine: the table commits it (or not) itself.
        let out = dir.path().join("new.parquet");
        let o = sbbf(&[
            "add",
            file.to_str().unwrap(),
            "-c",
            "u8",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        assert!(has_filter(&out, "u8"));
    }
    // A folder named `metadata` without Iceberg's files is not a table.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("metadata")).unwrap();
    let file = copy_in(dir.path(), "f.parquet");
    let o = sbbf(&["add", file.to_str().unwrap(), "-c", "u8", "--in-place"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[cfg(unix)]
#[test]
fn in_place_keeps_mode_and_owner_and_refuses_read_only_files_and_hard_links() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let file = copy_in(dir.path(), "f.parquet");
    let path = file.to_str().unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&file).unwrap();
    let o = sbbf(&["add", path, "-c", "u8", "--in-place"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("read-only") && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let o = sbbf(&["add", path, "-c", "u8", "--in-place", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!(m.mode() & 0o777, 0o444, "the mode is kept");
    assert!(has_filter(&file, "u8"));

    // Someone else's file (only root may give a file away, so only root can test this).
    let root = effective_uid() == 0;
    if root {
        let theirs = copy_in(dir.path(), "theirs.parquet");
        std::os::unix::fs::chown(&theirs, Some(4321), Some(4322)).unwrap();
        let o = sbbf(&["add", theirs.to_str().unwrap(), "-c", "u8", "--in-place"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let m = std::fs::metadata(&theirs).unwrap();
        assert_eq!((m.uid(), m.gid()), (4321, 4322), "the owner is kept");
    }

    // A hard link would keep the old contents under its other name.
    let a = copy_in(dir.path(), "a.parquet");
    let b = dir.path().join("b.parquet");
    std::fs::hard_link(&a, &b).unwrap();
    let o = sbbf(&["add", a.to_str().unwrap(), "-c", "u8", "--in-place"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("hard links"), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
    let o = sbbf(&[
        "add",
        a.to_str().unwrap(),
        "-c",
        "u8",
        "--in-place",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(has_filter(&a, "u8") && !has_filter(&b, "u8"));
}

/// The effective user id, read from the process status (no libc call needed).
fn effective_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
        })
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

/// A valid Parquet file of about `gap` bytes: the testdata file with zeros between its last
/// column chunk and its footer (readers find the footer from the end; offsets stay right).
fn padded_file(path: &Path, gap: usize) {
    let src = std::fs::read(repo().join("testdata/pa_ints.parquet")).unwrap();
    let n = footer_start(&src);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    use std::io::Write as _;
    f.write_all(&src[..n]).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..gap >> 20 {
        f.write_all(&zeros).unwrap();
    }
    f.write_all(&src[n..]).unwrap();
    f.flush().unwrap();
}

#[cfg(unix)]
#[test]
fn an_interrupted_write_leaves_the_input_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.parquet");
    padded_file(&file, 400 << 20);
    let len = std::fs::metadata(&file).unwrap().len();
    let leftovers = || -> Vec<String> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".sbbf-"))
            .collect()
    };
    for signal in ["INT", "TERM"] {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"))
            .args([
                "add",
                file.to_str().unwrap(),
                "-c",
                "u8",
                "--replace",
                "--in-place",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the temporary output exists, then interrupt.
        let start = std::time::Instant::now();
        while leftovers().is_empty() && start.elapsed() < std::time::Duration::from_secs(60) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(!leftovers().is_empty(), "no temporary output appeared");
        let kill = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let out = child.wait_with_output().unwrap();
        let msg = stderr(&out);
        // On a busy machine the signal may come after the rename: then the run finished and
        // says so. Either way nothing is left beside the file.
        match out.status.code() {
            Some(130) => {
                assert!(msg.contains("removed the unfinished"), "{signal}: {msg}");
                assert_eq!(
                    std::fs::metadata(&file).unwrap().len(),
                    len,
                    "{signal}: the input changed"
                );
            }
            Some(0) => {
                assert!(
                    msg.contains("after the write had finished"),
                    "{signal}: {msg}"
                );
                // Put the input back for the next signal.
                padded_file(&file, 400 << 20);
            }
            other => panic!("{signal}: exit {other:?}: {msg}"),
        }
        assert_eq!(leftovers(), Vec::<String>::new(), "{signal}: {msg}");
    }
}

/// A signal that lands after the output was renamed into place (the run is printing its
/// report) finds the work done: the run says so and exits 0, with its report. The order is
/// forced, not timed: the run's stdout is a socket whose buffer is already full, so the run
/// waits in its first write, after the rename, until the test reads.
#[cfg(unix)]
#[test]
fn a_signal_after_the_rename_reports_a_finished_write() {
    use std::io::{Read as _, Write as _};
    use std::os::unix::fs::MetadataExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.parquet");
    std::fs::copy(repo().join("testdata/pa_ints.parquet"), &file).unwrap();
    for signal in ["INT", "TERM"] {
        let (mut reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
        // Fill the buffer (the flag is shared by both handles: blocking again for the run).
        writer.set_nonblocking(true).unwrap();
        // Big writes first, then single bytes: a socket that refuses 4 KiB may still take a
        // short line.
        let mut filler = 0usize;
        for chunk in [4096, 1] {
            loop {
                match (&writer).write(&vec![b'.'; chunk]) {
                    Ok(n) => filler += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
        }
        writer.set_nonblocking(false).unwrap();
        let ino = std::fs::metadata(&file).unwrap().ino();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"))
            .args(["add", file.to_str().unwrap(), "-c", "u8", "--replace"])
            .arg("--in-place")
            .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(
                writer,
            )))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The rename gives the path a new inode; the run then blocks on its report.
        for _ in 0..300_000 {
            if std::fs::metadata(&file).unwrap().ino() != ino {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_ne!(
            std::fs::metadata(&file).unwrap().ino(),
            ino,
            "never renamed"
        );
        let kill = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        // The run is blocked on its report: its handler answers first. Wait for that word
        // (reading before it would let the run finish and exit before the handler is
        // scheduled), then read the filler and the report so that the run can go on.
        let mut child = child;
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut msg = String::new();
        while !msg.contains("interrupted") {
            use std::io::BufRead as _;
            if err.read_line(&mut msg).unwrap() == 0 {
                break;
            }
        }
        let drain = std::thread::spawn(move || {
            let mut all = Vec::new();
            reader.read_to_end(&mut all).unwrap();
            all
        });
        let status = child.wait().unwrap();
        err.read_to_string(&mut msg).unwrap();
        let stdout = drain.join().unwrap();
        assert_eq!(status.code(), Some(0), "{signal}: {msg}");
        assert!(
            msg.contains("interrupted after the write had finished"),
            "{signal}: {msg}"
        );
        let report = String::from_utf8_lossy(&stdout[filler..]);
        assert!(report.contains("filter(s); filter bytes"), "{report}");
        assert!(!msg.contains("removed the unfinished"), "{msg}");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["f.parquet".to_string()]);
}

/// `add --replace --in-place` run again and again overwrites the filters the run before it
/// appended instead of appending more: the file stops growing, and the data and new filters
/// read back.
#[test]
fn repeated_replace_in_place_does_not_grow_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.parquet");
    let src = repo().join("testdata/pa_ints.parquet");
    std::fs::copy(&src, &file).unwrap();
    let want = batches(&src);
    let f = file.to_str().unwrap();
    let run = || {
        let o = sbbf(&["add", f, "-c", "u8", "-c", "i64", "--replace", "--in-place"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read(&file).unwrap()
    };
    let first = run();
    let second = run();
    let third = run();
    assert_eq!(second.len(), first.len(), "the second run grew the file");
    assert_eq!(third.len(), first.len(), "the third run grew the file");
    // Same data, same options: the same filters in the same place, nothing else moved.
    assert!(
        third == second,
        "a third run changed bytes a second run wrote"
    );
    assert_eq!(batches(&file), want);
    assert!(has_filter(&file, "u8") && has_filter(&file, "i64"));
    let o = sbbf(&["verify", f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Replacing u8 alone: i64's filter ends the body and is not this run's to drop, so the
    // whole body is kept and the new filters follow it.
    let o = sbbf(&["add", f, "-c", "u8", "--replace", "--in-place"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read(&file).unwrap();
    let body = footer_start(&third);
    assert_eq!(after[..body], third[..body]);
    assert!(has_filter(&file, "u8") && has_filter(&file, "i64"));
    let o = sbbf(&["verify", f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
