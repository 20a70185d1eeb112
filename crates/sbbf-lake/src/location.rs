//! Where a table's files are: a store rooted where its URLs start (the local file system at
//! `/`, an object store at its bucket), so the absolute locations a table's log or manifests
//! hold map to paths in it.

use crate::LakeError;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt as _};
use sbbf_parquet::source::object;
use sbbf_parquet::{Error, ReadError};
use std::path::PathBuf;
use std::sync::Arc;
use url::Url;

/// The largest log entry, metadata file or manifest read whole.
const MAX_METADATA_OBJECT: u64 = 256 << 20;

/// A store and the URL its root stands for: `file:///` for the local file system,
/// `s3://bucket/` (and the like) for an object store.
#[derive(Debug, Clone)]
pub struct StoreRoot {
    store: Arc<dyn ObjectStore>,
    base: Url,
}

impl StoreRoot {
    /// The local file system, rooted at `/`.
    pub fn local() -> StoreRoot {
        StoreRoot {
            store: Arc::new(object_store::local::LocalFileSystem::new()),
            base: Url::parse("file:///").expect("a constant URL"),
        }
    }

    /// The store `url` lives in, rooted at its bucket (configured from the environment, as
    /// [`object::store_from_url`] is).
    pub fn for_url(url: &str) -> Result<StoreRoot, Error> {
        let parsed = parse(url)?;
        let (store, path) = object::store_from_url(url)?;
        // The store is rooted where the URL's path starts: its base is the URL without the
        // path the store resolved.
        let mut base = parsed.clone();
        // (A folder URL's trailing `/` is not part of the path the store resolved.)
        let full = parsed
            .path()
            .trim_start_matches('/')
            .trim_end_matches('/')
            .to_string();
        let rest = path.as_ref();
        let root_path = full
            .strip_suffix(rest)
            .unwrap_or(&full)
            .trim_end_matches('/')
            .to_string();
        base.set_query(None);
        base.set_fragment(None);
        base.set_path(&format!("/{root_path}"));
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        Ok(StoreRoot { store, base })
    }

    /// A store the caller configured (a query engine's registered store), whose root stands
    /// for `base` (`s3://bucket/`).
    pub fn with_store(store: Arc<dyn ObjectStore>, base: Url) -> StoreRoot {
        StoreRoot { store, base }
    }

    /// The store.
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.store)
    }

    /// The URL the store's root stands for.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The path in the store of the absolute location `url` (a URL, or for the local store
    /// an absolute path).
    pub fn path_of(&self, url: &str) -> Result<StorePath, Error> {
        let parsed = match Url::parse(url) {
            Ok(u) => u,
            Err(_) if url.starts_with('/') && self.base.scheme() == "file" => {
                Url::from_file_path(url).map_err(|_| bad_url(url))?
            }
            Err(_) => return Err(bad_url(url)),
        };
        let same = parsed.scheme() == self.base.scheme()
            && parsed.host_str() == self.base.host_str()
            && parsed.port() == self.base.port();
        let rel = parsed.path().strip_prefix(self.base.path());
        match (same, rel) {
            (true, Some(rel)) => StorePath::from_url_path(rel).map_err(|_| bad_url(url)),
            _ => Err(LakeError::OutsideStore {
                file: url.to_string(),
                store: self.base.to_string(),
            }
            .into()),
        }
    }

    /// Reads a whole object (a log entry, a metadata file, a manifest).
    pub async fn get(&self, url: &str) -> Result<bytes::Bytes, Error> {
        let path = self.path_of(url)?;
        let store_err = |source| ReadError::Store {
            location: url.to_string(),
            source,
        };
        let got = self.store.get(&path).await.map_err(store_err)?;
        // The size the store reports is checked before the body is read: a metadata file
        // or manifest of gigabytes is no table's (real ones are kilobytes to megabytes).
        if got.meta.size > MAX_METADATA_OBJECT {
            return Err(LakeError::TooLarge {
                location: url.to_string(),
                size: got.meta.size,
                limit: MAX_METADATA_OBJECT,
            }
            .into());
        }
        Ok(got.bytes().await.map_err(store_err)?)
    }

    /// The names directly under the folder `url` (one delimited listing).
    pub async fn list_dir(&self, url: &str) -> Result<(Vec<String>, Vec<String>), Error> {
        let mut path = self.path_of(url.trim_end_matches('/'))?;
        if path.as_ref().is_empty() {
            path = StorePath::default();
        }
        let listed = self
            .store
            .list_with_delimiter(Some(&path))
            .await
            .map_err(|source| ReadError::Store {
                location: url.to_string(),
                source,
            })?;
        let name = |p: &StorePath| p.filename().unwrap_or_default().to_string();
        Ok((
            listed.common_prefixes.iter().map(name).collect(),
            listed.objects.iter().map(|o| name(&o.location)).collect(),
        ))
    }
}

fn parse(url: &str) -> Result<Url, Error> {
    Url::parse(url).map_err(|source| {
        ReadError::Url {
            url: url.to_string(),
            source,
        }
        .into()
    })
}

fn bad_url(url: &str) -> Error {
    LakeError::BadLocation {
        location: url.to_string(),
    }
    .into()
}

/// The absolute URL of the table `arg` names (a local path or a URL), ending in `/` unless it
/// names a file (an Iceberg metadata file).
pub(crate) fn table_url(arg: &str) -> Result<Url, Error> {
    let file = arg.ends_with(".metadata.json");
    if object::is_remote_url(arg) {
        let mut u = parse(arg)?;
        if !file && !u.path().ends_with('/') {
            let p = format!("{}/", u.path());
            u.set_path(&p);
        }
        return Ok(u);
    }
    let abs = std::fs::canonicalize(arg).map_err(ReadError::Open)?;
    let u = match file {
        true => Url::from_file_path(&abs),
        false => Url::from_directory_path(&abs),
    };
    u.map_err(|_| bad_url(arg))
}

/// The local path of a `file://` URL (or an absolute path).
pub(crate) fn local_path(url: &str) -> Result<PathBuf, Error> {
    if url.starts_with('/') {
        return Ok(PathBuf::from(url));
    }
    parse(url)?.to_file_path().map_err(|_| bad_url(url))
}

#[cfg(all(test, feature = "object_store"))]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_rooted_at_its_bucket_whether_or_not_the_url_ends_in_a_slash() {
        for url in ["s3://lake/t/x/", "s3://lake/t/x", "s3://lake/"] {
            let root = StoreRoot::for_url(url).unwrap();
            assert_eq!(root.base().as_str(), "s3://lake/", "{url}");
            assert_eq!(
                root.path_of("s3://lake/t/x/_delta_log").unwrap().as_ref(),
                "t/x/_delta_log",
                "{url}"
            );
        }
    }
}
