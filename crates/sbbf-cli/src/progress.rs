//! Progress bars on stderr for long work; indicatif hides them when stderr is not a terminal,
//! so scripts and pipes see clean output.

use indicatif::{ProgressBar, ProgressStyle};

/// A callback `(done, total)` that drives a bar labelled `what`.
pub fn bar(what: &'static str) -> impl FnMut(usize, usize) + Send {
    let mut pb: Option<ProgressBar> = None;
    move |done, total| {
        let pb = pb.get_or_insert_with(|| {
            let pb = ProgressBar::new(total as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
            {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.set_message(what);
            pb
        });
        pb.set_position(done as u64);
        if done >= total {
            pb.finish_and_clear();
        }
    }
}

/// [`bar`] as a callback that may be called from any thread (a library's progress hook).
pub fn shared_bar(what: &'static str) -> std::sync::Arc<dyn Fn(usize, usize) + Send + Sync> {
    let bar = std::sync::Mutex::new(bar(what));
    std::sync::Arc::new(move |done, total| {
        if let Ok(mut b) = bar.lock() {
            b(done, total);
        }
    })
}

/// The bar of work that prints results as it goes ([`counter`]): `out!` and `err!` print
/// through it ([`around_output`]) so that lines and bar do not mix on a terminal.
static SHOWN: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);

/// Runs `print` with the bar of [`counter`], if one is shown, cleared for the time.
pub fn around_output<R>(print: impl FnOnce() -> R) -> R {
    let bar = match SHOWN.lock() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    };
    match bar {
        Some(b) => b.suspend(print),
        None => print(),
    }
}

/// A bar over `total` items labelled `what`, for work that also prints results as it goes
/// (hidden like [`bar`] when stderr is not a terminal). Dropping it clears it.
pub struct Counter(ProgressBar);

/// Starts a [`Counter`].
pub fn counter(what: &'static str, total: usize) -> Counter {
    let pb = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what);
    if let Ok(mut g) = SHOWN.lock() {
        *g = Some(pb.clone());
    }
    Counter(pb)
}

impl Counter {
    /// One more item done.
    pub fn inc(&self) {
        self.0.inc(1);
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if let Ok(mut g) = SHOWN.lock() {
            *g = None;
        }
        self.0.finish_and_clear();
    }
}
