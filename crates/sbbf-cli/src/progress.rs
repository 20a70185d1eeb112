//! Progress bars on stderr for long work; indicatif hides them when stderr is not a terminal,
//! so scripts and pipes see clean output.

use indicatif::{ProgressBar, ProgressStyle};

/// A callback `(done, total)` that drives a bar labelled `what`.
pub fn bar(what: &'static str) -> impl FnMut(usize, usize) {
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

/// A bar over `total` items labelled `what`, for work that also prints results as it goes:
/// print through [`ProgressBar::suspend`] so lines and bar do not mix. Hidden like [`bar`]
/// when stderr is not a terminal.
pub fn counter(what: &'static str, total: usize) -> ProgressBar {
    let pb = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what);
    pb
}
