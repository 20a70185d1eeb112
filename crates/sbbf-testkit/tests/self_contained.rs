//! A clone stands alone: nothing the repository runs or documents reaches outside it for the
//! conformance corpus or the project's references (tests once read the shared folder beside
//! the checkout).

use std::path::Path;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            // Build output and installed packages are not the repository's own files.
            if !matches!(
                name.as_str(),
                "target" | ".venv" | ".git" | "corpus" | "artifacts"
            ) {
                walk(&p, out);
            }
        } else if [".rs", ".py", ".sh", ".md", ".toml", ".java", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
            || name == "run"
        {
            out.push(p);
        }
    }
}

#[test]
fn nothing_refers_to_files_outside_the_repository() {
    let root = sbbf_testkit::repo();
    let mut files = Vec::new();
    for sub in ["crates", "tools", "docs", "fixtures", "fuzz", ".ci"] {
        walk(&root.join(sub), &mut files);
    }
    files.push(root.join("README.md"));
    files.push(root.join("Cargo.toml"));
    assert!(files.len() > 50, "only {} files found", files.len());
    // Spelled in pieces so that this file does not match itself.
    let outside = ["..", "/shared"].concat();
    let hits: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains(&outside)))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        hits.is_empty(),
        "files that read outside the repository: {hits:?}"
    );
}
