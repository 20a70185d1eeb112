//! `sbbf`: probe and inspect the split-block Bloom filters of Parquet files.

/// `println!` that ends the process quietly when stdout is closed early (`sbbf ... | head`)
/// instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // Formatted first and written whole: stdout's line buffer would otherwise cut a long
        // JSON line (one per file, megabytes with many values) into 1 KiB system calls.
        let mut line = format!($($arg)*);
        line.push('\n');
        if std::io::stdout().lock().write_all(line.as_bytes()).is_err() {
            std::process::exit(0);
        }
    }};
}

mod files;
mod inspect;
mod probe;
mod progress;
#[cfg(feature = "object_store")]
mod remote;
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
    Verify(verify::VerifyArgs),
    Add(write::AddArgs),
    Resize(write::ResizeArgs),
}

/// Output format.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Lines for people.
    #[default]
    Text,
    /// One JSON object per file and line, for scripts.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(probe::protect_negative_values(std::env::args_os()));
    let code = match cli.command {
        Command::Probe(a) => probe::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Add(a) => write::run_add(a),
        Command::Resize(a) => write::run_resize(a),
    };
    ExitCode::from(code)
}
