//! `sbbf`: probe and inspect the split-block Bloom filters of Parquet files.

/// `println!` for the results. A closed pipe (`sbbf ... | head`) ends the process quietly
/// (status 0); any other write error (a full disk, `> /dev/full`) is reported and ends it with
/// status 2, since the output is incomplete.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // Formatted first and written whole: stdout's line buffer would otherwise cut a long
        // JSON line (one per file, megabytes with many values) into 1 KiB system calls.
        let mut line = format!($($arg)*);
        line.push('\n');
        let written =
            $crate::progress::around_output(|| std::io::stdout().lock().write_all(line.as_bytes()));
        if let Err(e) = written {
            $crate::output_failed(e);
        }
    }};
}

/// `eprintln!` that never panics: when standard error is closed too (`2>&1 | head`), the
/// message is dropped.
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::progress::around_output(|| {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        });
    }};
}

/// Ends the process after stdout failed: quietly on a closed pipe, with status 2 otherwise.
pub(crate) fn output_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    err!("sbbf: cannot write the output: {e}");
    std::process::exit(2);
}

mod index;
mod inspect;
mod keys;
mod lake;
mod probe;
mod progress;
#[cfg(feature = "query")]
mod query;
mod store_url;
use store_url::path_error;
mod verify;
mod write;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

/// Parquet split-block Bloom filters: ask which row groups may hold a value, and look inside
/// the filters a file carries.
#[derive(Parser, Debug)]
#[command(name = "sbbf", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Probe(probe::ProbeArgs),
    Inspect(inspect::InspectArgs),
    Index(index::IndexArgs),
    Verify(verify::VerifyArgs),
    Add(write::AddArgs),
    Resize(write::ResizeArgs),
    Commit(write::CommitArgs),
    #[cfg(feature = "query")]
    Query(query::QueryArgs),
    /// SQL over Parquet files with DataFusion, pruned by the Bloom filters: not in this build
    /// (it needs the `query` feature: cargo build --release -p sbbf-cli --features query).
    #[cfg(not(feature = "query"))]
    Query(NoQuery),
}

/// What `sbbf query` takes when the build has no DataFusion: anything, to say how to get it.
#[cfg(not(feature = "query"))]
#[derive(clap::Args, Debug)]
struct NoQuery {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<String>,
}

/// Output format.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Lines for people.
    #[default]
    Text,
    /// JSON for scripts, one object per line (per file, per row or one report: see the
    /// command's help).
    Json,
}

/// A report as one JSON line (the library's report types hold strings, numbers and options:
/// serializing them cannot fail).
pub(crate) fn to_json(report: &impl serde::Serialize) -> String {
    serde_json::to_string(report).unwrap_or_default()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Probe(a) => probe::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Index(a) => index::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Add(a) => write::run_add(a),
        Command::Resize(a) => write::run_resize(a),
        Command::Commit(a) => write::run_commit(a),
        #[cfg(feature = "query")]
        Command::Query(a) => query::run(a),
        #[cfg(not(feature = "query"))]
        Command::Query(_) => {
            err!(
                "sbbf query: this sbbf was built without DataFusion; build it with the `query` \
                 feature: cargo build --release -p sbbf-cli --features query \
                 (or cargo install --path crates/sbbf-cli --features query)"
            );
            2
        }
    };
    ExitCode::from(code)
}
