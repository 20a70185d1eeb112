//! The crate's imports run one way: each top-level module (a file `src/x.rs` or a folder
//! `src/x/`) may use only the modules before it in [`ORDER`]. A `use crate::...` against the
//! order fails `imports_run_one_way`, and so does a module left out of the order. The
//! check (everything below [`ORDER`]) is the same in sbbf-index's `src/layering.rs`.

use std::collections::BTreeMap;
use std::path::Path;

/// The modules, first to last: translating filters, metric names, the table index and the
/// store views that list without files, then the per-file step, listing and schema, the
/// join path, and the table that ties them together.
const ORDER: &[&str] = &[
    "expr",      // DataFusion filters to Bloom-filter predicates
    "metric",    // names of the scan's metrics
    "stats",     // what a scan pruned and read, from an executed plan's metrics
    "index",     // asking the table index which files a scan can leave out
    "filtered",  // a store view whose listings leave out hidden names or dropped files
    "file_step", // the per-file step: footer, min/max pruning, Bloom filters
    "listing",   // a table's files: globs, hidden names, hive folders, link loops
    "schema",    // a table's schema from its footers or its index
    "join",      // join filters: the `SbbfSource` wrapper and its morsel planner
    "table",     // the `TableProvider`
];

/// The crate-level modules a file's code names (`crate::x`, `crate::{x, y::z}`), with
/// comments and the test module (from the first `#[cfg(test)] mod`) left out and root
/// re-exports (`pub use x::{A, B}` in lib.rs, as `alias`) resolved.
fn mentions(code: &str, alias: &BTreeMap<String, String>) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let code = &code[..test_module_start(&code)];
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name = part.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    out.push(name.to_string());
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out.into_iter()
        .map(|n| alias.get(&n).cloned().unwrap_or(n))
        .collect()
}

/// Where the file's test module starts: the first `#[cfg(test)]` followed (after other
/// attributes and a visibility) by `mod`; a `#[cfg(test)]` on a single item (a method, a
/// const) does not end the code.
fn test_module_start(code: &str) -> usize {
    const CFG: &str = "#[cfg(test)]";
    let mut from = 0;
    while let Some(i) = code[from..].find(CFG) {
        let at = from + i;
        let mut rest = code[at + CFG.len()..].trim_start();
        while rest.starts_with("#[") {
            rest = rest[rest.find(']').map_or(rest.len(), |e| e + 1)..].trim_start();
        }
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                rest = rest[rest.find(')').map_or(rest.len(), |e| e + 1)..].trim_start();
            }
        }
        if rest.starts_with("mod ") || rest.starts_with("mod\n") {
            return at;
        }
        from = at + CFG.len();
    }
    code.len()
}

/// `pub use x::{A, B}` / `pub use x::y::A` in lib.rs: names that belong to module x.
fn root_aliases(lib: &str) -> BTreeMap<String, String> {
    let mut alias = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(at) = stmt.find("pub use ") else {
            continue;
        };
        let path = stmt[at + "pub use ".len()..].trim();
        let Some((module, rest)) = path.split_once("::") else {
            continue;
        };
        let names = rest.rsplit("::").next().unwrap_or(rest);
        for n in names
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .map(|n| n.split(" as ").last().unwrap_or(n).trim())
        {
            if !n.is_empty() {
                alias.insert(n.to_string(), module.to_string());
            }
        }
    }
    alias
}

/// Every use against `order` among `files` (path below `src/`, code), as `module uses used
/// (file)`, and every module missing from `order`; `lib` is lib.rs, for its re-exports. A
/// module of `order` that does not exist is allowed. lib.rs and this file are left out.
fn violations(order: &[&str], files: &[(String, String)], lib: &str) -> Vec<String> {
    let alias = root_aliases(lib);
    let rank = |m: &str| order.iter().position(|o| *o == m);
    let mut bad = Vec::new();
    for (path, code) in files {
        let module = path
            .split('/')
            .next()
            .unwrap_or(path)
            .trim_end_matches(".rs");
        if module == "lib" || module == "layering" {
            continue;
        }
        let Some(own) = rank(module) else {
            bad.push(format!(
                "{module} ({path}) is not in ORDER: place it in the order"
            ));
            continue;
        };
        for used in mentions(code, &alias) {
            if let Some(r) = rank(&used) {
                if r > own {
                    bad.push(format!("{module} uses {used} ({path})"));
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

/// Every `.rs` file below `dir`, as (path below `src/`, code); a `tests/` folder holds test
/// modules, which may use anything, and is left out.
fn sources(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().unwrap().is_dir() {
            if name != "tests" {
                sources(&e.path(), &rel, out);
            }
        } else if name.ends_with(".rs") {
            out.push((rel, std::fs::read_to_string(e.path()).unwrap()));
        }
    }
}

/// The crate's own sources and its lib.rs.
fn crate_sources() -> (Vec<(String, String)>, String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, "", &mut files);
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    (files, lib)
}

#[test]
fn imports_run_one_way() {
    let (files, lib) = crate_sources();
    assert!(files.len() > 5, "{} files", files.len());
    let bad = violations(ORDER, &files, &lib);
    assert!(
        bad.is_empty(),
        "imports against the order:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn the_check_sees_a_use_against_the_order() {
    let order = &["low", "mid", "high", "later"];
    let lib = "pub use high::{Top, Other as Renamed};\npub use mid::Middle;";
    let files = vec![
        ("low.rs".to_string(), "use crate::Top;".to_string()),
        (
            "mid/part.rs".to_string(),
            "use crate::{low::X, Renamed};\n// crate::high in a comment".to_string(),
        ),
        (
            "high.rs".to_string(),
            "use crate::{low, mid::Middle};\n#[cfg(test)]\nfn f() { crate::later::g() }\n\
             #[cfg(test)]\n#[allow(unused)]\npub(crate) mod tests { use crate::later; }"
                .to_string(),
        ),
        ("newthing.rs".to_string(), String::new()),
    ];
    assert_eq!(
        violations(order, &files, lib),
        vec![
            "high uses later (high.rs)".to_string(),
            "low uses high (low.rs)".to_string(),
            "mid uses high (mid/part.rs)".to_string(),
            "newthing (newthing.rs) is not in ORDER: place it in the order".to_string(),
        ]
    );
}
