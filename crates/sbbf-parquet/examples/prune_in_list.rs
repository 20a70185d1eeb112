//! Pruning with a join's key set: `column IN (N literals)` on one file, timed, with the peak
//! memory the process reached (Linux `VmHWM`). Used by the issue's bound "100,000 literals on
//! the 64-row-group file in <= 1 s and <= 100 MiB above the filter bytes read".
//!
//! ```sh
//! cargo run --release -p sbbf-parquet --example prune_in_list -- FILE COLUMN [N]
//! ```
//! The literals are random int64 values (absent, so every one is tested in every row group:
//! the worst case) for an integer column, random 16-character keys for a string column.
//!
//! Prints the prune's wall and CPU time (the second of two runs: the filter bytes are then in
//! the page cache, so it is the kernel's cost: each key hashed once, each row group's filter
//! tested with the batch kernel) and the memory it took above the key set (peak RSS minus the
//! RSS once the literals were built). The issue's targets: 100,000 keys x 64 row groups in
//! <= 60 ms of CPU, 1,000,000 keys in <= 600 ms and <= 64 MiB above the key set.

use sbbf_parquet::prune::Predicate;
use sbbf_parquet::{Literal, ParquetFile};
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// User + system CPU seconds of this process (Linux `/proc/self/stat`, in clock ticks of
/// 1/100 s).
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (path, column) = (&args[1], &args[2]);
    let n: usize = args.get(3).map_or(Ok(100_000), |s| s.parse())?;
    let before = peak_rss_mib();
    let t0 = Instant::now();
    let pq = ParquetFile::open(std::fs::File::open(path)?)?;
    let col = pq.column_index(column)?;
    let stringy = pq.columns()[col].physical == parquet::basic::Type::BYTE_ARRAY;
    // A deterministic stream of pseudo-random literals (xorshift).
    let mut x = 0x9e3779b97f4a7c15u64;
    let literals: Vec<Literal> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if stringy {
                Literal::Utf8(format!("{x:016x}"))
            } else {
                Literal::Int(x as i64 as i128)
            }
        })
        .collect();
    let with_keys = rss_mib();
    let predicate = Predicate::In(column.clone(), literals);
    let pruned = pq.prune(&predicate)?;
    let (w, c) = (Instant::now(), cpu_s());
    let again = pq.prune(&predicate)?;
    let (wall, cpu) = (w.elapsed().as_secs_f64(), cpu_s() - c);
    assert_eq!(pruned, again);
    println!(
        "kernel: {n} keys x {} row groups: {:.1} ms wall, {:.0} ms CPU (ticks of 10 ms), {:.1} MiB above the key set",
        pruned.reasons.len(),
        wall * 1e3,
        cpu * 1e3,
        peak_rss_mib() - with_keys
    );
    let io = pq.io_stats();
    println!(
        "{n} literals, {} row groups: {} kept, {:.3} s, {} request(s), {:.1} MiB read, peak RSS {:.1} MiB ({:.1} MiB at start)",
        pruned.reasons.len(),
        pruned.row_groups.len(),
        t0.elapsed().as_secs_f64(),
        io.requests,
        io.bytes as f64 / 1048576.0,
        peak_rss_mib(),
        before
    );
    Ok(())
}
