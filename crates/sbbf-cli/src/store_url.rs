//! Object-store URLs on the command line: what to say before a store is even asked.

/// A location argument as every command reads it: a `file://` URL is the local path it names
/// (`file:///data/t/` is `/data/t/`: a table found as a table), anything else as given.
pub(crate) fn location(arg: &str) -> Result<String, String> {
    sbbf_parquet::source::object::local_location(arg)
        .map(|l| l.into_owned())
        .map_err(|e| e.to_string())
}

/// [`location`] for arguments read as paths.
pub(crate) fn location_path(arg: &str) -> Result<std::path::PathBuf, String> {
    location(arg).map(std::path::PathBuf::from)
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

/// Why a FILE argument names no files, in one line: a web server's 404 as such, a store's
/// HTML error page cut to its first line.
pub(crate) fn path_error(arg: &str, e: &sbbf_parquet::Error) -> String {
    use sbbf_parquet::{Error, ReadError};
    match e {
        Error::Read(ReadError::Store {
            source: sbbf_parquet::source::object::object_store::Error::NotFound { .. },
            ..
        }) if arg.starts_with("http://") || arg.starts_with("https://") => {
            format!("{arg}: not found (HTTP 404)")
        }
        // The reason names the path already.
        Error::Read(r @ ReadError::NoFiles { .. }) => r.to_string(),
        Error::Read(r @ (ReadError::Store { .. } | ReadError::NoObjects { .. })) => {
            one_line(&r.to_string())
        }
        other => format!("{arg}: {}", one_line(&other.to_string())),
    }
}

/// An object store error on one line: servers answer errors with whole HTML pages, and the
/// first line says what happened.
pub(crate) fn one_line(msg: &str) -> String {
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
