//! A moto S3 server on a loopback port for one test, stopped when dropped.
//!
//! moto comes from PyPI into `tools/.venv` by `tools/setup/setup-s3-test.sh` (`.ci/run` runs it).
//! When it is missing the tests fail with that command: they never skip.

use crate::repo;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Access key and secret moto accepts (it does not check signatures).
pub const KEY: &str = "sbbf-test-key";
/// The secret that goes with [`KEY`].
pub const SECRET: &str = "sbbf-test-secret";
/// The region the tests use.
pub const REGION: &str = "us-east-1";

/// A running `moto_server` on 127.0.0.1.
pub struct Moto {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Moto {
    /// Starts `tools/.venv/bin/moto_server -H 127.0.0.1 -p <free port>` and waits until it
    /// answers HTTP (at most 60 s). Panics with the install command when moto is missing.
    pub fn start() -> Moto {
        let bin = repo().join("tools/.venv/bin/moto_server");
        if !bin.exists() {
            panic!(
                "\n\nThe S3 tests need moto's S3 server, and {} is missing.\n\
                 Install it (into tools/.venv, from PyPI) with:\n\n    bash tools/setup/setup-s3-test.sh\n\n",
                bin.display()
            );
        }
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log =
                std::env::temp_dir().join(format!("sbbf-moto-{}-{port}.log", std::process::id()));
            let log_file = std::fs::File::create(&log).expect("moto log file");
            let child = Command::new(&bin)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().expect("log"))
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let mut moto = Moto { child, port, log };
            match moto.wait_ready(Duration::from_secs(60)) {
                Ok(()) => return moto,
                Err(e) => last = e,
            }
        }
        panic!("moto_server did not start: {last}");
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "moto_server exited with {status}: {}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                ));
            }
            if let Ok(reply) = self.http("GET", "/", &[]) {
                if reply.starts_with("HTTP/1.") {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "moto_server did not answer on port {} within {limit:?}: {}",
            self.port,
            std::fs::read_to_string(&self.log).unwrap_or_default()
        ))
    }

    /// One plain HTTP/1.1 request with `Connection: close`; the whole reply as text.
    fn http(&self, method: &str, path: &str, body: &[u8]) -> std::io::Result<String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )?;
        s.write_all(body)?;
        let mut out = Vec::new();
        s.read_to_end(&mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto needs no signature for it).
    pub fn create_bucket(&self, name: &str) {
        let reply = self
            .http("PUT", &format!("/{name}"), &[])
            .expect("PUT bucket");
        assert!(
            reply.starts_with("HTTP/1.1 200"),
            "create bucket {name}: {reply}"
        );
    }

    /// Uploads a file's bytes as `key` (a plain PUT: moto needs no signature for it).
    pub fn put(&self, bucket: &str, key: &str, data: &[u8]) {
        let reply = self
            .http("PUT", &format!("/{bucket}/{key}"), data)
            .expect("PUT object");
        assert!(reply.starts_with("HTTP/1.1 200"), "upload {key}: {reply}");
    }

    /// Uploads every `*.parquet` directly in `dir` under `prefix/`; returns the file names.
    pub fn upload_dir(&self, bucket: &str, prefix: &str, dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_file() && p.extension().is_some_and(|x| x == "parquet") {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                self.put(
                    bucket,
                    &format!("{prefix}/{name}"),
                    &std::fs::read(&p).unwrap(),
                );
                names.push(name);
            }
        }
        names.sort();
        names
    }

    /// The requests the server has logged so far, one line each as its log shows them
    /// (`"GET /bucket?list-type=2&prefix=t%2F... HTTP/1.1" 200 -`): to count what a command
    /// asked of it.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('"').map(|(_, r)| without_colours(r)))
            .filter(|r| r.contains(" HTTP/1."))
            .collect()
    }

    /// The environment the CLI reads its S3 settings from.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", REGION.into()),
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }
}

/// `text` without terminal colour codes (`ESC [ ... m`), which the server's log puts around
/// some requests.
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
