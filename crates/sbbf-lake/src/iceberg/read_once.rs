//! Delete files read once per snapshot: a delete file may apply to many data files (a
//! partition's, or every one), and each asks for it.

use sbbf_parquet::Error;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// What was made of each file read so far, by its URL.
pub(crate) struct ReadOnce<T>(Arc<Mutex<HashMap<String, Arc<T>>>>);

impl<T> Default for ReadOnce<T> {
    fn default() -> Self {
        ReadOnce(Arc::default())
    }
}

impl<T> Clone for ReadOnce<T> {
    fn clone(&self) -> Self {
        ReadOnce(Arc::clone(&self.0))
    }
}

impl<T> std::fmt::Debug for ReadOnce<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadOnce({} read)", self.lock().len())
    }
}

impl<T> ReadOnce<T> {
    /// What `read` made of `url`, reading it only the first time. Two callers asking at once
    /// may both read it; either result is kept.
    pub(crate) async fn get<F>(&self, url: &str, read: F) -> Result<Arc<T>, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        if let Some(made) = self.lock().get(url) {
            return Ok(Arc::clone(made));
        }
        let made = Arc::new(read.await?);
        self.lock().insert(url.to_string(), Arc::clone(&made));
        Ok(made)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<T>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
