//! The part file one worker of a distributed table write leaves for the commit
//! (`*.sbbfcopies`, JSON): the table and version it was based on, the operation, and each copy
//! written (its original, its path, size and time, what was written into it). A part is input
//! like any file: every field is checked when it is read.

use super::{KeptFile, PART_EXTENSION as EXTENSION};
use crate::delta::commit::{About, Swap};
use crate::LakeError;
use sbbf_parquet::write::{WriteReport, WrittenFilter};
use sbbf_parquet::Error;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What the format's first field says; a part of another format or version is refused.
const FORMAT: &str = "sbbf-table-copies";
const VERSION: u64 = 1;

/// The largest part file read (a part of 100,000 copies is some 60 MB).
const MAX_BYTES: u64 = 1 << 30;

/// One copy of a part.
#[derive(Debug, Clone)]
pub(crate) struct Copy {
    pub(crate) swap: Swap,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) report: WriteReport,
}

/// A part file's contents.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    /// The table's URL.
    pub(crate) table: String,
    pub(crate) read_version: u64,
    pub(crate) about: About,
    pub(crate) bytes_read: u64,
    pub(crate) copies: Vec<Copy>,
    pub(crate) kept: Vec<KeptFile>,
}

pub(crate) fn bad(part: &str, reason: String) -> Error {
    LakeError::BadPart {
        part: part.to_string(),
        reason,
    }
    .into()
}

impl Part {
    fn to_json(&self) -> Value {
        let copies: Vec<Value> = self
            .copies
            .iter()
            .map(|c| {
                let filters: Vec<Value> = c
                    .report
                    .filters
                    .iter()
                    .map(|f| {
                        json!({
                            "row_group": f.row_group,
                            "column": f.column,
                            "bytes_before": f.bytes_before,
                            "bytes_after": f.bytes_after,
                            "distinct": f.distinct,
                        })
                    })
                    .collect();
                json!({
                    "old_path": c.swap.old_path,
                    "new_path": c.swap.new_path,
                    "new_size": c.swap.new_size,
                    "new_mtime_ms": c.swap.new_mtime_ms,
                    "from": c.from,
                    "to": c.to,
                    "input_len": c.report.input_len,
                    "output_len": c.report.output_len,
                    "bytes_written": c.report.bytes_written,
                    "compacted": c.report.compacted,
                    "filters": filters,
                })
            })
            .collect();
        let kept: Vec<Value> = self
            .kept
            .iter()
            .map(|k| json!({"file": k.url, "why": k.why}))
            .collect();
        json!({
            "format": FORMAT,
            "version": VERSION,
            "table": self.table,
            "read_version": self.read_version,
            "operation": self.about.operation,
            "parameters": self.about.parameters,
            "bytes_read": self.bytes_read,
            "copies": copies,
            "kept": kept,
        })
    }

    /// Writes the part to `out`, atomically.
    pub(crate) fn write(&self, out: &Path) -> Result<(), Error> {
        let bytes = self.to_json().to_string();
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| sbbf_parquet::WriteError::TempFile {
                dir: dir.to_path_buf(),
                source,
            })?;
        }
        sbbf_parquet::write::atomic_write(out, out, |w| {
            std::io::Write::write_all(w, bytes.as_bytes())
                .map_err(sbbf_parquet::write::write_err(out))
        })
        .map(|_| ())
    }

    fn from_json(v: &Value, name: &str) -> Result<Part, Error> {
        let bad = |what: &str| bad(name, format!("its {what} is missing or malformed"));
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
        if text(v, "format").as_deref() != Some(FORMAT) || num(v, "version") != Some(VERSION) {
            return Err(bad("format (a part of this format, version 1)"));
        }
        let parameters = v
            .get("parameters")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("parameters"))?
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([Value::String(k), Value::String(v)]) => Ok((k.clone(), v.clone())),
                _ => Err(bad("parameters")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut copies = Vec::new();
        for c in v
            .get("copies")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("copies"))?
        {
            let field = |k: &str| text(c, k).ok_or_else(|| bad(&format!("copy's {k}")));
            let count = |k: &str| num(c, k).ok_or_else(|| bad(&format!("copy's {k}")));
            let mut filters = Vec::new();
            for f in c
                .get("filters")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("copy's filters"))?
            {
                let n = |k: &str| num(f, k).ok_or_else(|| bad(&format!("filter's {k}")));
                filters.push(WrittenFilter {
                    row_group: usize::try_from(n("row_group")?).map_err(|_| bad("row group"))?,
                    column: text(f, "column").ok_or_else(|| bad("filter's column"))?,
                    bytes_before: n("bytes_before")?,
                    bytes_after: n("bytes_after")?,
                    distinct: num(f, "distinct"),
                });
            }
            copies.push(Copy {
                swap: Swap {
                    old_path: field("old_path")?,
                    new_path: field("new_path")?,
                    new_size: count("new_size")?,
                    new_mtime_ms: c
                        .get("new_mtime_ms")
                        .and_then(Value::as_i64)
                        .ok_or_else(|| bad("copy's new_mtime_ms"))?,
                },
                from: field("from")?,
                to: field("to")?,
                report: WriteReport {
                    filters,
                    input_len: count("input_len")?,
                    output_len: count("output_len")?,
                    bytes_written: count("bytes_written")?,
                    compacted: c
                        .get("compacted")
                        .and_then(Value::as_bool)
                        .ok_or_else(|| bad("copy's compacted"))?,
                },
            });
        }
        let kept = v
            .get("kept")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("kept"))?
            .iter()
            .map(|k| match (text(k, "file"), text(k, "why")) {
                (Some(url), Some(why)) => Ok(KeptFile { url, why }),
                _ => Err(bad("kept")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Part {
            table: text(v, "table").ok_or_else(|| bad("table"))?,
            read_version: num(v, "read_version").ok_or_else(|| bad("read_version"))?,
            about: About {
                operation: text(v, "operation").ok_or_else(|| bad("operation"))?,
                parameters,
            },
            bytes_read: num(v, "bytes_read").ok_or_else(|| bad("bytes_read"))?,
            copies,
            kept,
        })
    }
}

/// Reads the parts `paths` names (a folder: every `*.sbbfcopies` in it, by name).
pub(crate) fn read_all(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Part)>, Error> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| bad(&p.display().to_string(), e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == EXTENSION))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let name = f.display().to_string();
        let len = std::fs::metadata(&f)
            .map_err(|e| bad(&name, e.to_string()))?
            .len();
        if len > MAX_BYTES {
            return Err(bad(
                &name,
                format!("it is {len} bytes, more than a part can be"),
            ));
        }
        let bytes = std::fs::read(&f).map_err(|e| bad(&name, e.to_string()))?;
        let v: Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(&name, format!("not JSON: {e}")))?;
        out.push((f, Part::from_json(&v, &name)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_reads_back_as_written_and_damage_is_refused() {
        let part = Part {
            table: "file:///t/".into(),
            read_version: 3,
            about: About {
                operation: "ADD BLOOM FILTERS".into(),
                parameters: vec![("columns".into(), "[\"id\"]".into())],
            },
            bytes_read: 10,
            copies: vec![Copy {
                swap: Swap {
                    old_path: "a.parquet".into(),
                    new_path: "a-sbbf-0123456789ab.parquet".into(),
                    new_size: 12,
                    new_mtime_ms: 5,
                },
                from: "file:///t/a.parquet".into(),
                to: "file:///t/a-sbbf-0123456789ab.parquet".into(),
                report: WriteReport {
                    filters: vec![WrittenFilter {
                        row_group: 0,
                        column: "id".into(),
                        bytes_before: 0,
                        bytes_after: 32,
                        distinct: Some(3),
                    }],
                    input_len: 10,
                    output_len: 12,
                    bytes_written: 2,
                    compacted: false,
                },
            }],
            kept: vec![KeptFile {
                url: "file:///t/b.parquet".into(),
                why: "it has the filters".into(),
            }],
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("0.sbbfcopies");
        part.write(&out).unwrap();
        let back = read_all(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(back.len(), 1);
        let back = &back[0].1;
        assert_eq!(back.to_json(), part.to_json());
        // Damage of any kind is a refusal, never a panic.
        let text = std::fs::read_to_string(&out).unwrap();
        for damaged in [
            text.replace("sbbf-table-copies", "other"),
            text.replace("\"new_size\":12", "\"new_size\":-1"),
            text.replace("\"copies\":[", "\"copies\":[1,"),
            text[..text.len() / 2].to_string(),
        ] {
            std::fs::write(&out, damaged).unwrap();
            let e = read_all(std::slice::from_ref(&out)).unwrap_err();
            assert!(
                matches!(LakeError::of(&e), Some(LakeError::BadPart { .. })),
                "{e}"
            );
        }
    }
}
