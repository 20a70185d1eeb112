//! The check behind every crate's layering test: a crate's top-level modules (a file `src/x.rs`
//! or a folder `src/x/`) each use only the modules before them in the crate's order. A crate
//! keeps its order beside a one-line test ([`assert_one_way`]); the reading of Rust sources
//! (comments, the test module, lib.rs re-exports) is written here once.

use std::collections::BTreeMap;
use std::path::Path;

/// Fails with every use against `order` in the crate at `manifest_dir` (its
/// `CARGO_MANIFEST_DIR`), and every module left out of `order`; at least `min_files` source
/// files must be found (a guard against checking an empty folder).
pub fn assert_one_way(manifest_dir: &str, order: &[&str], min_files: usize) {
    let src = Path::new(manifest_dir).join("src");
    let mut files = Vec::new();
    sources(&src, "", &mut files);
    assert!(
        files.len() >= min_files,
        "{} files in {}",
        files.len(),
        src.display()
    );
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let bad = violations(order, &files, &lib);
    assert!(
        bad.is_empty(),
        "imports against the order:\n  {}",
        bad.join("\n  ")
    );
}

/// Where a file's test module starts: the first `#[cfg(test)]` that is a module's attribute,
/// followed only by further attributes, comments and a `pub` or `pub(..)` before `mod`. A
/// `#[cfg(test)]` on a function or a method does not end the checked code.
pub fn test_module_start(code: &str) -> Option<usize> {
    const ATTR: &str = "#[cfg(test)]";
    let mut from = 0;
    while let Some(i) = code[from..].find(ATTR) {
        let at = from + i;
        let mut rest = &code[at + ATTR.len()..];
        loop {
            rest = rest.trim_start();
            if rest.starts_with("#[") {
                // Another attribute: skip to its closing bracket.
                let mut depth = 0;
                let mut end = rest.len();
                for (j, c) in rest.char_indices() {
                    match c {
                        '[' => depth += 1,
                        ']' if depth == 1 => {
                            end = j + 1;
                            break;
                        }
                        ']' => depth -= 1,
                        _ => {}
                    }
                }
                rest = &rest[end..];
            } else if rest.starts_with("//") {
                rest = rest.find('\n').map_or("", |end| &rest[end..]);
            } else {
                break;
            }
        }
        if let Some(after) = rest.strip_prefix("pub") {
            let after = after.trim_start();
            rest = match after.strip_prefix('(') {
                Some(scope) => scope
                    .find(')')
                    .map_or("", |end| scope[end + 1..].trim_start()),
                None => after,
            };
        }
        if rest
            .strip_prefix("mod")
            .is_some_and(|r| r.starts_with(char::is_whitespace))
        {
            return Some(at);
        }
        from = at + ATTR.len();
    }
    None
}

/// The crate-level modules a file's code names (`crate::x`, `crate::{x, y::z}`), comments and
/// the test module left out, with root re-exports (`pub use x::{A, B}` in lib.rs) resolved.
fn mentions(code: &str, alias: &BTreeMap<String, String>) -> Vec<String> {
    let code = &code[..test_module_start(code).unwrap_or(code.len())];
    let code: String = code
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
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
pub fn violations(order: &[&str], files: &[(String, String)], lib: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::{test_module_start, violations};

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

    /// A `#[cfg(test)]` on a method (as in sbbf-parquet's `crypto/mod.rs`) or a function does
    /// not end the checked code; the test module does, whatever attributes and visibility it
    /// has.
    #[test]
    fn only_the_test_module_is_left_out() {
        let code = "impl Key {\n    #[cfg(test)]\n    pub(crate) fn for_test() {}\n}\n\
                    #[cfg(test)]\nfn helper() {}\n\
                    use crate::read::plan;\n\
                    #[cfg(test)]\n#[allow(dead_code)]\n// the tests\npub(crate) mod tests {\n    \
                    use crate::write::build;\n}\n";
        let files = [("format/layout.rs".to_string(), code.to_string())];
        assert_eq!(
            violations(&["format", "read", "write"], &files, ""),
            vec!["format uses read (format/layout.rs)".to_string()]
        );
        // (Cut at the first `#[cfg(test)]`, the code was empty: nothing was found.)
        assert_eq!(test_module_start(code), code.find("#[cfg(test)]\n#[allow"));
        assert_eq!(test_module_start("#[cfg(test)]\nmod tests;"), Some(0));
        assert_eq!(test_module_start("#[cfg(test)]\nfn modest() {}"), None);
    }
}
