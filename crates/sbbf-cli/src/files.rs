//! Turning FILE arguments into files: a file, a directory (every `*.parquet` below it), or a
//! quoted glob.

use std::path::{Path, PathBuf};

/// Expands one FILE argument; an error names what could not be found.
pub fn expand(arg: &str) -> Result<Vec<PathBuf>, String> {
    let path = Path::new(arg);
    if path.is_dir() {
        let mut out = Vec::new();
        walk(path, &mut out).map_err(|e| format!("{arg}: {e}"))?;
        out.sort();
        if out.is_empty() {
            return Err(format!("{arg}: no *.parquet files in this directory"));
        }
        return Ok(out);
    }
    if path.exists() {
        return Ok(vec![path.to_path_buf()]);
    }
    if arg.contains(['*', '?', '[']) {
        let mut out: Vec<PathBuf> = glob::glob(arg)
            .map_err(|e| format!("{arg}: bad glob pattern: {e}"))?
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .collect();
        out.sort();
        if out.is_empty() {
            return Err(format!("{arg}: no file matches this pattern"));
        }
        return Ok(out);
    }
    Err(format!("{arg}: no such file or directory"))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
        {
            out.push(p);
        }
    }
    Ok(())
}
