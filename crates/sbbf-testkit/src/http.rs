//! A plain HTTP server on a loopback port that serves the files of a directory with ranged
//! reads (`Range: bytes=a-b`, `bytes=a-`, `bytes=-n`), counting what it is asked: the stand-in
//! for a web server or a CDN in front of Parquet files. Python's `http.server` has no ranges.
//!
//! HTTP/1.1 with keep-alive, one thread per connection; GET and HEAD; anything else is 405.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What the server has been asked since it started (or since [`Counts::reset`]).
#[derive(Debug, Default)]
pub struct Counts {
    /// GET requests.
    pub gets: AtomicU64,
    /// HEAD requests.
    pub heads: AtomicU64,
    /// Body bytes sent (counted as each body starts).
    pub bytes: AtomicU64,
    /// Requests being answered now.
    in_flight: AtomicU64,
    /// The most requests answered at once.
    pub max_in_flight: AtomicU64,
}

impl Counts {
    /// Starts counting again from zero.
    pub fn reset(&self) {
        for c in [&self.gets, &self.heads, &self.bytes, &self.max_in_flight] {
            c.store(0, Ordering::SeqCst);
        }
    }

    /// `gets=.. heads=.. bytes=.. max_in_flight=..`, for assertion messages.
    pub fn report(&self) -> String {
        format!(
            "gets={} heads={} bytes={} max_in_flight={}",
            self.gets.load(Ordering::SeqCst),
            self.heads.load(Ordering::SeqCst),
            self.bytes.load(Ordering::SeqCst),
            self.max_in_flight.load(Ordering::SeqCst)
        )
    }
}

/// A running range server; stops accepting when dropped.
pub struct RangeServer {
    /// The port on 127.0.0.1.
    pub port: u16,
    /// What it was asked.
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl RangeServer {
    /// Serves the files below `root` at `http://127.0.0.1:<port>/<relative path>`.
    pub fn serve(root: &Path) -> RangeServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (root, c, s) = (root.to_path_buf(), Arc::clone(&counts), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (root, c) = (root.clone(), Arc::clone(&c));
                std::thread::spawn(move || {
                    let _ = connection(conn, &root, &c);
                });
            }
        });
        RangeServer { port, counts, stop }
    }

    /// The URL of `name` (a path relative to the root).
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for RangeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
    }
}

/// Answers the requests of one connection until the client closes it.
fn connection(conn: TcpStream, root: &Path, counts: &Counts) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("/").to_string(),
        );
        let mut range = None;
        let mut body_len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "range" => range = Some(v.trim().to_string()),
                    "content-length" => body_len = v.trim().parse().unwrap_or(0),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; body_len];
        reader.read_exact(&mut body)?;
        let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counts.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let r = answer(&mut out, &method, &target, range.as_deref(), root, counts);
        counts.in_flight.fetch_sub(1, Ordering::SeqCst);
        r?;
    }
}

fn answer(
    out: &mut TcpStream,
    method: &str,
    target: &str,
    range: Option<&str>,
    root: &Path,
    counts: &Counts,
) -> std::io::Result<()> {
    let head = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return status(out, "405 Method Not Allowed"),
    };
    if head {
        counts.heads.fetch_add(1, Ordering::SeqCst);
    } else {
        counts.gets.fetch_add(1, Ordering::SeqCst);
    }
    let Some(path) = file_path(root, target) else {
        return status(out, "404 Not Found");
    };
    let Ok(data) = std::fs::read(&path) else {
        return status(out, "404 Not Found");
    };
    let len = data.len() as u64;
    let (code, start, end) = match range.map(|r| parse_range(r, len)) {
        None => ("200 OK", 0, len),
        Some(Some((s, e))) => ("206 Partial Content", s, e),
        Some(None) => {
            let msg = format!(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\n\r\n"
            );
            return out.write_all(msg.as_bytes());
        }
    };
    let mut msg = format!(
        "HTTP/1.1 {code}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nLast-Modified: Mon, 30 Nov 2026 00:00:00 GMT\r\nETag: \"{len}\"\r\n",
        end - start
    );
    if code.starts_with("206") {
        msg.push_str(&format!(
            "Content-Range: bytes {start}-{}/{len}\r\n",
            end - 1
        ));
    }
    msg.push_str("\r\n");
    out.write_all(msg.as_bytes())?;
    if !head {
        // Counted before the body is written: a client that has read it all may exit (and
        // its test read the counts) before this thread runs again.
        counts.bytes.fetch_add(end - start, Ordering::SeqCst);
        out.write_all(&data[start as usize..end as usize])?;
    }
    out.flush()
}

fn status(out: &mut TcpStream, code: &str) -> std::io::Result<()> {
    out.write_all(format!("HTTP/1.1 {code}\r\nContent-Length: 0\r\n\r\n").as_bytes())
}

/// The file a request target names below `root`, refusing `..`.
fn file_path(root: &Path, target: &str) -> Option<PathBuf> {
    let rel = target.split('?').next()?.trim_start_matches('/');
    if rel.split('/').any(|p| p == ".." || p.is_empty()) {
        return None;
    }
    let p = root.join(rel);
    p.is_file().then_some(p)
}

/// `bytes=a-b` (inclusive), `bytes=a-`, `bytes=-n` as a half-open range within `len`.
fn parse_range(r: &str, len: u64) -> Option<(u64, u64)> {
    let spec = r.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().ok()?;
            (len.saturating_sub(n), len)
        }
        (a, "") => (a.parse().ok()?, len),
        (a, b) => (a.parse().ok()?, (b.parse::<u64>().ok()? + 1).min(len)),
    };
    (start < end && start < len).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), Some((0, 10)));
        assert_eq!(parse_range("bytes=90-", 100), Some((90, 100)));
        assert_eq!(parse_range("bytes=-10", 100), Some((90, 100)));
        assert_eq!(parse_range("bytes=-1000", 100), Some((0, 100)));
        assert_eq!(parse_range("bytes=95-200", 100), Some((95, 100)));
        assert_eq!(parse_range("bytes=100-", 100), None);
    }
}
