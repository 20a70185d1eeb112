//! `sbbf probe URL COLUMN VALUE...`: Parquet files on object stores (s3://, gs://, az://,
//! http(s)://). A URL naming an object probes it; a prefix (or a URL ending in `/`) probes
//! every `*.parquet` below it. Files are probed concurrently (footers and the needed filter
//! bytes only) and reported in path order, with the output and exit codes of local files.

use crate::probe::{report, Outcome, ProbeArgs};
use sbbf_parquet::asyncio::REMOTE_POLICY;
use sbbf_parquet::remote::object_store::{self, ObjectStoreExt as _};
use sbbf_parquet::remote::{self, ManyOptions};
use sbbf_parquet::report::object_name as shown_name;
use sbbf_parquet::value::{encode_text, EncodeOptions};
use sbbf_parquet::{Error, ReadError};

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
    if let Err(e) = check_http_endpoint(url) {
        err!("sbbf probe: {url}: {e}");
        return 2;
    }
    let (store, path) = match remote::store_from_url(url) {
        Ok(x) => x,
        Err(e) => {
            err!("sbbf probe: {}", one_line(&e.to_string()));
            return 2;
        }
    };
    let as_dir = url.ends_with('/');
    let files = if is_http(url) && !as_dir {
        // A web server names files, it does not list them: a 404 is the answer (no WebDAV
        // PROPFIND listing, no retries).
        match store.head(&path).await {
            Ok(meta) => vec![meta],
            Err(object_store::Error::NotFound { .. }) => {
                err!("sbbf probe: {url}: not found (HTTP 404)");
                return 2;
            }
            Err(e) => {
                err!("sbbf probe: {url}: {}", one_line(&e.to_string()));
                return 2;
            }
        }
    } else if !as_dir && !path.as_ref().is_empty() {
        // One object: its footer and size in one suffix read (no HEAD first); a name that is
        // no object may still be a prefix.
        let encode = |ty: &sbbf_parquet::column::ColumnType| {
            a.values
                .iter()
                .map(|v| encode_text(ty, v, opts).map_err(Error::from))
                .collect::<Result<Vec<_>, _>>()
        };
        match remote::open_unsized(&store, &path).await {
            Ok(mut pq) => {
                let result = remote::probe_file(&mut pq, &a.column, encode, REMOTE_POLICY)
                    .await
                    .map(|p| report(url, &p.column, &p.encoded, &p.answers, p.io, a))
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error>);
                let mut outcome = Outcome::new(a, false);
                outcome.add(url, result, a);
                return outcome.finish(a);
            }
            Err(Error::Read(ReadError::Store {
                source: object_store::Error::NotFound { .. },
                ..
            })) => match remote::resolve(&store, &path, true).await {
                Ok(f) => f,
                Err(e) => {
                    err!("sbbf probe: {url}: {}", one_line(&e.to_string()));
                    return 2;
                }
            },
            Err(e) => {
                err!("sbbf probe: {url}: {}", one_line(&e.to_string()));
                return 2;
            }
        }
    } else {
        match remote::resolve(&store, &path, as_dir).await {
            Ok(f) => f,
            Err(e) => {
                err!("sbbf probe: {url}: {}", one_line(&e.to_string()));
                return 2;
            }
        }
    };
    let encode = |ty: &sbbf_parquet::column::ColumnType| {
        a.values
            .iter()
            .map(|v| encode_text(ty, v, opts).map_err(Error::from))
            .collect::<Result<Vec<_>, _>>()
    };
    let results = remote::probe_many(
        &store,
        &files,
        &a.column,
        encode,
        ManyOptions {
            concurrency: a.concurrency as usize,
            ..ManyOptions::default()
        },
    )
    .await;
    let mut outcome = Outcome::new(a, files.len() > 1 || as_dir);
    for (meta, result) in files.iter().zip(results) {
        let shown = shown_name(url, path.as_ref(), meta.location.as_ref());
        let result = result
            .map(|p| report(&shown, &p.column, &p.encoded, &p.answers, p.io, a))
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error>);
        outcome.add(&shown, result, a);
    }
    outcome.finish(a)
}

/// Whether `url` is a plain web URL (not an S3-style one on an HTTP endpoint).
fn is_http(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// An `s3://` URL with an `http://` endpoint needs `AWS_ALLOW_HTTP=true`; without it the
/// store fails with "builder error". Says so first.
pub(crate) fn check_http_endpoint(url: &str) -> Result<(), String> {
    if !(url.starts_with("s3://") || url.starts_with("s3a://")) {
        return Ok(());
    }
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .find_map(|k| var(k).map(|v| (*k, v)));
    let Some((key, endpoint)) = endpoint else {
        return Ok(());
    };
    let allowed = var("AWS_ALLOW_HTTP").is_some_and(|v| {
        ["1", "true", "on", "yes", "y"].contains(&v.to_ascii_lowercase().as_str())
    });
    if endpoint.to_ascii_lowercase().starts_with("http://") && !allowed {
        return Err(format!(
            "{key}={endpoint} is plain HTTP; set AWS_ALLOW_HTTP=true to allow unencrypted connections"
        ));
    }
    Ok(())
}

/// An object store error on one line: servers answer errors with whole HTML pages, and the
/// first line says what happened.
fn one_line(msg: &str) -> String {
    let first = msg.lines().next().unwrap_or("").trim_end();
    match first.find(": <") {
        Some(i) => first[..i].to_string(),
        None => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn html_error_pages_are_cut() {
        assert_eq!(
            one_line("PROPFIND x - Server returned non-2xx status code: 501 Not Implemented: <!DOCTYPE HTML>\n<html>"),
            "PROPFIND x - Server returned non-2xx status code: 501 Not Implemented"
        );
        assert_eq!(one_line("plain"), "plain");
    }
}
