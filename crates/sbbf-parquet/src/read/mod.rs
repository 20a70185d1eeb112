//! Reading filters: the footer (`footer`), the answers ([`answer`]), the one I/O-free plan of which bytes to read
//! (`plan`), and its drivers: [`ParquetFile`](file::ParquetFile)'s synchronous probes over any
//! `ChunkReader`, and (feature `async`) [`async_driver`] over any arrow-rs `AsyncFileReader`.

pub mod answer;
#[cfg(feature = "async")]
pub mod async_driver;
pub mod file;
pub(crate) mod footer;
pub(crate) mod plan;
pub(crate) mod probe;
