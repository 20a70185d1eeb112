//! The README's five-minute tour runs as written: every shell line of its `sh` blocks between
//! `<!-- tour:begin -->` and `<!-- tour:end -->` is run in a temporary folder holding a copy
//! of `testdata/` (so the tour's relative paths work and nothing in the repository is
//! written), its `/tmp/sbbf-tour` taken to a folder below it. `sbbf` lines run the binary
//! built for these tests and must exit as [`EXPECTED`] says, printing what the README says
//! they print; `mkdir`, `cp` and `sleep` lines are done here. The tour's Python lines are
//! run by `crates/sbbf-python/tests/test_readme.py`.

use crate::common::{repo, testdata, text};
use std::path::PathBuf;
use std::process::Command;

/// Each `sbbf` line of the tour: its exit status and what its output (stdout and stderr)
/// holds, as the README's line above the block says. A line of the tour missing here, or a
/// line here missing from the tour, fails the test: the two are edited together.
const EXPECTED: &[(&str, i32, &[&str])] = &[
    (
        "sbbf probe testdata/pa_ints.parquet i64 -752296985104395475 42",
        0,
        &[
            "`-752296985104395475`: maybe in row group(s) 3; absent in 3",
            "`42`: absent in all 4",
        ],
    ),
    (
        "sbbf probe testdata/ i64 -752296985104395475 -l",
        0,
        &["testdata/pa_ints.parquet"],
    ),
    (
        "sbbf probe testdata/lake/delta_basic id 600 --stats",
        0,
        &["version 4 (1 data file(s)", "`600`: maybe in row group(s) 0"],
    ),
    (
        "sbbf probe testdata/lake/delta_basic id 600 --as-of 2",
        0,
        &["in 1 of 3 file(s)"],
    ),
    (
        "sbbf probe testdata/lake/iceberg/ns/ice_basic id 600",
        0,
        &["`600`: maybe in row group(s) 0", "in 1 of 3 file(s)"],
    ),
    (
        "sbbf probe ns.ice_basic id 600 --catalog sqlite://testdata/lake/iceberg/catalog.db",
        0,
        &[
            "testdata/lake/iceberg/ns/ice_basic/data/",
            "in 1 of 3 file(s)",
        ],
    ),
    (
        "sbbf query testdata/lake/delta_partitioned \"SELECT p, count(*) FROM t GROUP BY p ORDER BY p\"",
        0,
        &["| a | 400", "| c | 400"],
    ),
    (
        "sbbf query testdata/pa_ints.parquet \"SELECT count(*) FROM t WHERE i64 = -752296985104395475\" --stats",
        0,
        &["| 3 ", "\"row_groups_pruned_bloom\":3"],
    ),
    (
        "sbbf index build /tmp/sbbf-tour/delta_checkpoint -c id",
        0,
        &["covers the table's files at version 13", "`id`: 14 entr(ies)"],
    ),
    (
        "sbbf probe /tmp/sbbf-tour/delta_checkpoint id 650 -l --stats",
        0,
        &[
            "index: 14 of 14 file(s) answered by the index",
            "part-00000-8e6ee47f-ca59-40fa-9b62-8ff7d46697a1-c000.zstd.parquet",
        ],
    ),
    (
        "sbbf add /tmp/sbbf-tour/delta_basic -c s",
        0,
        &["version 5 committed"],
    ),
    (
        "sbbf probe /tmp/sbbf-tour/delta_basic s s7 s600",
        0,
        &["`s7`: absent in all 1", "`s600`: maybe in 1 row group(s)"],
    ),
];

/// What the second run of the same `sbbf add` prints (the tour runs that line twice).
const ADD_AGAIN: &str = "nothing to do at Delta table version 5";

/// The shell lines of the `sh` blocks between the tour's markers, comments and blank lines
/// left out.
fn tour_lines(readme: &str) -> Vec<String> {
    let begin = readme
        .find("<!-- tour:begin -->")
        .expect("README.md has no <!-- tour:begin --> marker");
    let end = readme
        .find("<!-- tour:end -->")
        .expect("README.md has no <!-- tour:end --> marker");
    assert!(begin < end, "the tour's markers are out of order");
    let mut lines = Vec::new();
    let mut in_sh = false;
    for line in readme[begin..end].lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if in_sh && !t.is_empty() && !t.starts_with('#') {
            lines.push(t.to_string());
        }
    }
    lines
}

/// A line's words as a plain shell splits them: whitespace outside quotes, `'...'` and
/// `"..."` kept whole without their quotes, an unquoted `#` at a word's start ending the line.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut has) = (Vec::new(), String::new(), false);
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    has = true;
                }
                '#' if !has => break,
                c if c.is_whitespace() => {
                    if has {
                        out.push(std::mem::take(&mut cur));
                        has = false;
                    }
                }
                c => {
                    cur.push(c);
                    has = true;
                }
            },
        }
    }
    assert!(quote.is_none(), "unclosed quote in the tour's line {line}");
    if has {
        out.push(cur);
    }
    out
}

#[test]
fn the_readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("read README.md");
    let lines = tour_lines(&readme);
    assert!(lines.len() >= 10, "the tour has only {} lines", lines.len());

    // Every sbbf line of the tour is expected here, and every expectation is in the tour.
    let sbbf_lines: Vec<&String> = lines.iter().filter(|l| l.starts_with("sbbf ")).collect();
    for line in &sbbf_lines {
        assert!(
            EXPECTED.iter().any(|(l, _, _)| l == line),
            "the README's tour line `{line}` has no expectation in readme_tour.rs"
        );
    }
    for (l, _, _) in EXPECTED {
        assert!(
            sbbf_lines.iter().any(|line| line == l),
            "readme_tour.rs expects `{l}`, which the README's tour no longer has"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    crate::lake::copy_dir(&testdata(), &cwd.join("testdata"));
    // As in a clone: the catalog's tables are found where the catalog file lies.
    crate::lake::retarget_catalog(&cwd.join("testdata/lake/iceberg/catalog.db"));
    let scratch = cwd.join("sbbf-tour");
    let scratch = scratch.to_str().unwrap();
    let at = |w: &str| -> String { w.replace("/tmp/sbbf-tour", scratch) };
    let path = |w: &str| -> PathBuf {
        let p = PathBuf::from(at(w));
        match p.is_absolute() {
            true => p,
            false => cwd.join(p),
        }
    };

    let mut seen: Vec<String> = Vec::new();
    for line in &lines {
        let w = words(line);
        let (cmd, args) = w.split_first().expect("an empty tour line");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match cmd.as_str() {
            "mkdir" => {
                for a in args.iter().filter(|a| !a.starts_with('-')) {
                    std::fs::create_dir_all(path(a)).unwrap();
                }
            }
            "cp" => {
                let operands: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| !a.starts_with('-'))
                    .collect();
                let (to, from) = operands.split_last().expect("cp without operands");
                let to = path(to);
                for f in from {
                    let f = path(f);
                    let name = f.file_name().expect("cp of a named file or folder");
                    crate::lake::copy_dir(&f, &to.join(name));
                }
            }
            "sleep" => {
                let s: f64 = args[0].parse().expect("sleep SECONDS");
                std::thread::sleep(std::time::Duration::from_secs_f64(s + 0.1));
            }
            "sbbf" => {
                if args.first() == Some(&"query") && !cfg!(feature = "query") {
                    // This test binary's sbbf has no DataFusion.
                    seen.push(line.clone());
                    continue;
                }
                let again = seen.contains(line);
                seen.push(line.clone());
                let run: Vec<String> = args.iter().map(|a| at(a)).collect();
                let out = Command::new(env!("CARGO_BIN_EXE_sbbf"))
                    .args(&run)
                    .current_dir(cwd)
                    .output()
                    .expect("run sbbf");
                let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
                let (_, status, says) = EXPECTED.iter().find(|(l, _, _)| l == line).unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(*status),
                    "the tour's `{line}` exited otherwise than expected:\n{all}"
                );
                let says: Vec<&str> = match again {
                    true if line.starts_with("sbbf add ") => vec![ADD_AGAIN],
                    _ => says.to_vec(),
                };
                for s in says {
                    assert!(
                        all.contains(s),
                        "the tour's `{line}` does not print `{s}`:\n{all}"
                    );
                }
                assert!(!all.contains("panicked"), "`{line}`:\n{all}");
            }
            other => panic!("the tour runs `{other}`, which readme_tour.rs does not know: {line}"),
        }
    }
    // The tour wrote only below the temporary folder.
    assert!(cwd.join("sbbf-tour/delta_checkpoint/_sbbf_index").is_dir());
}

#[test]
fn tour_lines_split_as_a_shell_splits_them() {
    assert_eq!(
        words("sbbf query t/ \"SELECT p, count(*) FROM t\" --stats   # a comment"),
        [
            "sbbf",
            "query",
            "t/",
            "SELECT p, count(*) FROM t",
            "--stats"
        ]
    );
    assert_eq!(words("a 'b c' d#e"), ["a", "b c", "d#e"]);
    let readme = "x\n<!-- tour:begin -->\n```sh\nsbbf a\n# no\n\n```\n```python\nsbbf b\n```\n```sh\nsbbf c\n```\n<!-- tour:end -->\n```sh\nsbbf d\n```\n";
    assert_eq!(tour_lines(readme), ["sbbf a", "sbbf c"]);
}
