//! Crash safety of `add` and `resize`: killed at random points, they leave the input as it
//! was and the target either absent (or, in place, the old file) or complete, never partial.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn sbbf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sbbf"))
}

fn valid_parquet_with_filters(p: &Path) -> bool {
    let o = sbbf()
        .args(["verify", p.to_str().unwrap(), "--samples", "10"])
        .output()
        .unwrap();
    o.status.code() == Some(0)
}

/// Runs `args` to completion once to learn how long it takes, then `rounds` times killed
/// after a delay spread over that duration, checking the files after each kill.
fn kill_at_random_points(args: &[&str], input: &Path, target: &Path, rounds: u32) {
    let original = std::fs::read(input).unwrap();
    let started = Instant::now();
    let o = sbbf().args(args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let full = started.elapsed();
    let finished = std::fs::read(target).unwrap();
    if target != input {
        std::fs::remove_file(target).unwrap();
    } else {
        std::fs::write(input, &original).unwrap();
    }
    let mut seed = 0x243f_6a88_85a3_08d3u64;
    for round in 0..rounds {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = full.mul_f64((seed >> 11) as f64 / (1u64 << 53) as f64 * 1.2);
        let mut child = sbbf().args(args).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL: no cleanup code runs
        let _ = child.wait();
        if target != input {
            assert_eq!(
                std::fs::read(input).unwrap(),
                original,
                "round {round}: input changed"
            );
            if target.exists() {
                assert_eq!(
                    std::fs::read(target).unwrap(),
                    finished,
                    "round {round}: partial output"
                );
                std::fs::remove_file(target).unwrap();
            }
        } else {
            let now = std::fs::read(input).unwrap();
            assert!(
                now == original || now == finished,
                "round {round}: input neither old nor new"
            );
            std::fs::write(input, &original).unwrap();
        }
    }
}

#[test]
fn add_and_resize_survive_being_killed() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pa_ints.parquet");
    let input = dir.path().join("in.parquet");
    std::fs::copy(&src, &input).unwrap();
    let out = dir.path().join("out.parquet");
    // Large filters make the write long enough to be interrupted in the middle.
    let add = [
        "add",
        input.to_str().unwrap(),
        "-c",
        "i64",
        "-c",
        "i32",
        "--replace",
        "--ndv",
        "3000000",
        "-o",
        out.to_str().unwrap(),
    ];
    kill_at_random_points(&add, &input, &out, 12);
    // In place.
    let add_in_place = [
        "add",
        input.to_str().unwrap(),
        "-c",
        "i64",
        "--replace",
        "--ndv",
        "3000000",
        "--in-place",
    ];
    kill_at_random_points(&add_in_place, &input, &input, 12);
    // Resize of a file with big filters.
    let big = dir.path().join("big.parquet");
    let o = sbbf()
        .args([
            "add",
            src.to_str().unwrap(),
            "-c",
            "i64",
            "--replace",
            "--ndv",
            "3000000",
            "-o",
            big.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let small = dir.path().join("small.parquet");
    let resize = [
        "resize",
        big.to_str().unwrap(),
        "--fpp",
        "0.01",
        "-o",
        small.to_str().unwrap(),
    ];
    kill_at_random_points(&resize, &big, &small, 12);
    // Whatever survived is a good file; the directory holds no partial output under a real
    // name (a SIGKILL can leave a hidden `.sbbf-*.tmp`, which no reader mistakes for data).
    assert!(valid_parquet_with_filters(&input));
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            ["in.parquet", "big.parquet"].contains(&name.as_str()) || name.starts_with(".sbbf-"),
            "unexpected file {name}"
        );
    }
}
