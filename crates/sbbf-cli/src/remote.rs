//! `sbbf probe URL COLUMN VALUE...`: Parquet files on object stores (s3://, gs://, az://,
//! http(s)://). A URL naming an object probes it; a prefix (or a URL ending in `/`) probes
//! every `*.parquet` below it. Files are probed concurrently (footers and the needed filter
//! bytes only) and reported in path order, with the output and exit codes of local files.

use crate::probe::{report, Outcome, ProbeArgs};
use sbbf_parquet::remote::{self, ManyOptions};
use sbbf_parquet::value::{encode_text, EncodeOptions};
use sbbf_parquet::Error;

pub fn run(a: &ProbeArgs, opts: EncodeOptions) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            err!("sbbf probe: cannot start the async runtime: {e}");
            return 2;
        }
    };
    runtime.block_on(probe_url(a, opts))
}

async fn probe_url(a: &ProbeArgs, opts: EncodeOptions) -> u8 {
    let url = a.file.as_str();
    let (store, path) = match remote::store_from_url(url) {
        Ok(x) => x,
        Err(e) => {
            err!("sbbf probe: {e}");
            return 2;
        }
    };
    let as_dir = url.ends_with('/');
    let files = match remote::resolve(&store, &path, as_dir).await {
        Ok(f) => f,
        Err(e) => {
            err!("sbbf probe: {url}: {e}");
            return 2;
        }
    };
    let encode = |ty: &sbbf_parquet::column::ColumnType| {
        a.values
            .iter()
            .map(|v| encode_text(ty, v, opts).map_err(Error::from))
            .collect::<Result<Vec<_>, _>>()
    };
    let results =
        remote::probe_many(&store, &files, &a.column, encode, ManyOptions::default()).await;
    let mut outcome = Outcome::new(a, files.len() > 1 || as_dir);
    for (meta, result) in files.iter().zip(results) {
        let shown = shown_name(url, path.as_ref(), meta.location.as_ref());
        let result = result
            .map(|p| report(&shown, &p.column, &p.encoded, &p.answers, a))
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error>);
        outcome.add(&shown, result, a);
    }
    outcome.finish(a)
}

/// The name shown for an object: the URL itself for a single object, else the URL (as a
/// directory) followed by the object's path below the prefix.
fn shown_name(url: &str, prefix: &str, location: &str) -> String {
    if location == prefix {
        return url.to_string();
    }
    let rel = if prefix.is_empty() {
        location
    } else {
        location
            .strip_prefix(prefix)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(location)
    };
    format!("{}/{rel}", url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::shown_name;

    #[test]
    fn names() {
        assert_eq!(
            shown_name("s3://b/dir/", "dir", "dir/x/a.parquet"),
            "s3://b/dir/x/a.parquet"
        );
        assert_eq!(
            shown_name("s3://b/dir", "dir", "dir/a.parquet"),
            "s3://b/dir/a.parquet"
        );
        assert_eq!(shown_name("s3://b/", "", "a.parquet"), "s3://b/a.parquet");
        assert_eq!(
            shown_name("s3://b/a.parquet", "a.parquet", "a.parquet"),
            "s3://b/a.parquet"
        );
    }
}
