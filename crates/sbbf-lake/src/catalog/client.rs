//! The catalogs' clients: a SQL catalog in a SQLite file read and committed to, a REST
//! catalog asked over HTTP (built with the feature `tables`).

use super::{Catalog, TOKEN_VAR};
use crate::LakeError;
use sbbf_parquet::Error;
use std::path::{Path, PathBuf};

/// How long one REST request may take, answer included.
const REST_TIMEOUT_SECS: u64 = 120;

/// Largest catalog answer read (a REST response, which inlines the table's metadata).
const MAX_RESPONSE: usize = 256 << 20;

fn catalog_error(catalog: &Catalog, reason: impl Into<String>) -> Error {
    LakeError::Catalog {
        catalog: catalog.uri.clone(),
        reason: reason.into(),
    }
    .into()
}

/// Splits `NS.TABLE` (`a.b.t`: namespace `a.b`) into namespace levels and table name.
fn identifier<'a>(catalog: &Catalog, table: &'a str) -> Result<(Vec<&'a str>, &'a str), Error> {
    let parts: Vec<&str> = table.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(catalog_error(
            catalog,
            format!("`{table}` is not a table identifier: give NAMESPACE.TABLE (e.g. ns.events)"),
        ));
    }
    let (name, ns) = parts.split_last().expect("two parts at least");
    Ok((ns.to_vec(), name))
}

/// The current metadata file of `table` (`NS.TABLE`) in `catalog`: a local path for a
/// `file:` location, else the object-store URL the catalog gives.
pub async fn metadata_location(catalog: &Catalog, table: &str) -> Result<String, Error> {
    let location = current(catalog, table).await?;
    if !location.starts_with("file:") {
        return Ok(location);
    }
    let path = url::Url::parse(&location)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| LakeError::BadLocation {
            location: location.clone(),
        })?;
    let path = relocated(catalog, &path).unwrap_or(path);
    Ok(path.display().to_string())
}

/// Where a SQL catalog's metadata file that storage lacks is, when the catalog file was
/// copied or moved together with its warehouse (a backup, a fixture in a clone): the same
/// path's tail below the catalog file's folder, the longest tail that exists, of at least the
/// table folder, `metadata/` and the file. The table read there is then read as a moved one
/// (its files below the folder found, a commit to it refused). `None` when the file is where
/// the catalog says, or nowhere.
pub(crate) fn relocated(catalog: &Catalog, missing: &Path) -> Option<PathBuf> {
    let catalog_file = Path::new(catalog.uri.strip_prefix("sqlite://")?);
    if missing.exists() {
        return None;
    }
    let base = catalog_file.parent()?;
    let parts: Vec<&std::ffi::OsStr> = missing
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    (0..parts.len().saturating_sub(2))
        .map(|from| base.join(parts[from..].iter().collect::<PathBuf>()))
        .find(|candidate| candidate.is_file())
}

/// The current metadata location of `table` in `catalog`, as the catalog writes it (a
/// commit compares against exactly this text).
pub(crate) async fn current(catalog: &Catalog, table: &str) -> Result<String, Error> {
    let (ns, name) = identifier(catalog, table)?;
    if let Some(path) = catalog.uri.strip_prefix("sqlite://") {
        let (catalog, ns, name) = (catalog.clone(), ns.join("."), name.to_string());
        let path = path.to_string();
        return tokio::task::spawn_blocking(move || sql_lookup(&catalog, &path, &ns, &name))
            .await
            .map_err(|e| LakeError::Catalog {
                catalog: String::new(),
                reason: e.to_string(),
            })?;
    }
    if catalog.uri.starts_with("http://") || catalog.uri.starts_with("https://") {
        return rest_lookup(catalog, &ns, name).await;
    }
    Err(catalog_error(
        catalog,
        "not a catalog this reads: give sqlite:///PATH (a SQL catalog in SQLite) or http(s)://... (a REST catalog)",
    ))
}

/// Whether `catalog` is a SQL catalog in SQLite (else REST).
pub(crate) fn is_sql(catalog: &Catalog) -> bool {
    catalog.uri.starts_with("sqlite://")
}

/// Points `table` (`NS.TABLE`) of the SQL catalog `catalog` at the metadata file `new` if it
/// still points at `old`, as pyiceberg's SqlCatalog and Java's JdbcCatalog commit: `false`
/// when another writer moved it first (nothing changed).
pub(crate) async fn swap(
    catalog: &Catalog,
    table: &str,
    old: &str,
    new: &str,
) -> Result<bool, Error> {
    let (ns, name) = identifier(catalog, table)?;
    let Some(path) = catalog.uri.strip_prefix("sqlite://") else {
        return Err(catalog_error(
            catalog,
            "commits go to SQL catalogs in SQLite only",
        ));
    };
    let (catalog, path, ns, name) = (
        catalog.clone(),
        path.to_string(),
        ns.join("."),
        name.to_string(),
    );
    let (old, new) = (old.to_string(), new.to_string());
    tokio::task::spawn_blocking(move || sql_swap(&catalog, &path, &ns, &name, &old, &new))
        .await
        .map_err(|e| LakeError::Catalog {
            catalog: String::new(),
            reason: e.to_string(),
        })?
}

fn sql_swap(
    catalog: &Catalog,
    path: &str,
    ns: &str,
    name: &str,
    old: &str,
    new: &str,
) -> Result<bool, Error> {
    use rusqlite::{params_from_iter, Connection, OpenFlags};
    if !std::path::Path::new(path).is_file() {
        return Err(catalog_error(catalog, format!("no SQLite file at {path}")));
    }
    let err = |e: rusqlite::Error| catalog_error(catalog, e.to_string());
    let mut db =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(err)?;
    // Another writer holding the database briefly is waited for, not failed on.
    db.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(err)?;
    let mut columns = Vec::new();
    {
        let mut stmt = db
            .prepare("PRAGMA table_info(iceberg_tables)")
            .map_err(err)?;
        let names = stmt.query_map([], |r| r.get::<_, String>(1)).map_err(err)?;
        for n in names {
            columns.push(n.map_err(err)?);
        }
    }
    let has = |c: &str| columns.iter().any(|n| n == c);
    let mut sql = String::from("UPDATE iceberg_tables SET metadata_location = ?1");
    if has("previous_metadata_location") {
        sql.push_str(", previous_metadata_location = ?2");
    }
    sql.push_str(" WHERE table_namespace = ?3 AND table_name = ?4 AND metadata_location = ?2");
    let mut args = vec![
        new.to_string(),
        old.to_string(),
        ns.to_string(),
        name.to_string(),
    ];
    if let Some(c) = &catalog.name {
        sql.push_str(" AND catalog_name = ?5");
        args.push(c.clone());
    }
    if has("iceberg_type") {
        sql.push_str(" AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)");
    }
    // One row or none: a statement that would move several (the same table in several
    // catalogs of the database, no --catalog-name) is undone.
    let tx = db.transaction().map_err(err)?;
    let changed = tx
        .execute(&sql, params_from_iter(args.iter()))
        .map_err(err)?;
    if changed > 1 {
        tx.rollback().map_err(err)?;
        return Err(catalog_error(
            catalog,
            format!("{ns}.{name} is in several catalogs of {path}: say which with --catalog-name"),
        ));
    }
    tx.commit().map_err(err)?;
    Ok(changed == 1)
}

/// The SQL catalog: one row of `iceberg_tables`.
fn sql_lookup(catalog: &Catalog, path: &str, ns: &str, name: &str) -> Result<String, Error> {
    use rusqlite::{Connection, OpenFlags};
    // sqlite:///abs/path and sqlite:relative both name a file; never create one.
    if !std::path::Path::new(path).is_file() {
        return Err(catalog_error(catalog, format!("no SQLite file at {path}")));
    }
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| catalog_error(catalog, e.to_string()))?;
    let sql = "SELECT * FROM iceberg_tables WHERE table_namespace = ?1 AND table_name = ?2";
    let mut stmt = db
        .prepare(sql)
        .map_err(|e| catalog_error(catalog, format!("not a SQL catalog ({e})")))?;
    let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
    let col = |n: &str| columns.iter().position(|c| c == n);
    let (Some(cat_col), Some(loc_col)) = (col("catalog_name"), col("metadata_location")) else {
        return Err(catalog_error(
            catalog,
            "not a SQL catalog (iceberg_tables lacks catalog_name or metadata_location)",
        ));
    };
    let type_col = col("iceberg_type");
    let rows = stmt
        .query_map([ns, name], |r| {
            Ok((
                r.get::<_, String>(cat_col)?,
                r.get::<_, Option<String>>(loc_col)?,
                match type_col {
                    Some(i) => r.get::<_, Option<String>>(i)?,
                    None => None,
                },
            ))
        })
        .map_err(|e| catalog_error(catalog, e.to_string()))?;
    let mut found = Vec::new();
    for row in rows {
        let (cat, loc, kind) = row.map_err(|e| catalog_error(catalog, e.to_string()))?;
        // JdbcCatalog's V1 schema keeps views in the same table.
        if kind
            .as_deref()
            .is_some_and(|k| !k.eq_ignore_ascii_case("TABLE"))
        {
            continue;
        }
        if catalog.name.as_deref().is_none_or(|n| n == cat) {
            found.push((cat, loc));
        }
    }
    let table = format!("{ns}.{name}");
    match found.len() {
        0 => Err(LakeError::NoSuchTable {
            catalog: catalog.uri.clone(),
            table,
        }
        .into()),
        1 => {
            let (_, loc) = found.remove(0);
            loc.ok_or_else(|| catalog_error(catalog, format!("{table} has no metadata location")))
        }
        _ => Err(catalog_error(
            catalog,
            format!(
                "{table} is in catalogs {}: say which with --catalog-name",
                found
                    .iter()
                    .map(|(c, _)| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// A REST catalog's table: the client, the token sent, and the table's URL (the server's
/// prefix read from its `v1/config`).
struct RestTable {
    client: reqwest::Client,
    token: Option<String>,
    url: url::Url,
    /// `NS.TABLE`, for messages.
    name: String,
}

impl RestTable {
    async fn open(catalog: &Catalog, ns: &[&str], name: &str) -> Result<RestTable, Error> {
        let base = url::Url::parse(&format!("{}/", catalog.uri.trim_end_matches('/')))
            .map_err(|e| catalog_error(catalog, e.to_string()))?;
        // A catalog that stops answering is an error, not a command that never ends.
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(30))
            .timeout(std::time::Duration::from_secs(REST_TIMEOUT_SECS))
            // A redirected POST comes back as a GET of the table, whose 200 would pass for
            // a commit made: a redirect is an answer of its own (give the URL it names).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| catalog_error(catalog, e.to_string()))?;
        let token = std::env::var(TOKEN_VAR).ok().filter(|t| !t.is_empty());
        let mut rest = RestTable {
            client,
            token,
            url: base.clone(),
            name: format!("{}.{name}", ns.join(".")),
        };
        let mut config = base
            .join("v1/config")
            .map_err(|e| catalog_error(catalog, e.to_string()))?;
        if let Some(w) = &catalog.name {
            config.query_pairs_mut().append_pair("warehouse", w);
        }
        let (status, body) = rest.send(catalog, rest.client.get(config)).await?;
        let config = json_answer(catalog, "v1/config", status, &body)?;
        // The server's prefix: overrides win over defaults.
        let prefix = ["overrides", "defaults"]
            .iter()
            .find_map(|k| config.get(k)?.get("prefix")?.as_str())
            .map(str::to_string);
        {
            let mut segs = rest
                .url
                .path_segments_mut()
                .map_err(|_| catalog_error(catalog, "not a base URL"))?;
            segs.pop_if_empty().push("v1");
            if let Some(p) = &prefix {
                segs.extend(p.split('/').filter(|s| !s.is_empty()));
            }
            // Namespace levels are joined by the unit separator (0x1F) in one path segment.
            segs.push("namespaces")
                .push(&ns.join("\u{1f}"))
                .push("tables")
                .push(name);
        }
        Ok(rest)
    }

    /// `req` with the token, when there is one.
    fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// Sends `req` (with the token): the status and the body, read up to [`MAX_RESPONSE`].
    async fn send(
        &self,
        catalog: &Catalog,
        req: reqwest::RequestBuilder,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), Error> {
        let resp = self
            .authed(req)
            .send()
            .await
            .map_err(|e| catalog_error(catalog, e.to_string()))?;
        let status = resp.status();
        let body = read_capped(catalog, resp).await?;
        Ok((status, body))
    }

    /// The table's current metadata location.
    async fn metadata_location(&self, catalog: &Catalog) -> Result<String, Error> {
        let (status, body) = self
            .send(catalog, self.client.get(self.url.clone()))
            .await?;
        let table = &self.name;
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(LakeError::NoSuchTable {
                catalog: catalog.uri.clone(),
                table: table.clone(),
            }
            .into());
        }
        let loaded = json_answer(catalog, &format!("loading {table}"), status, &body)?;
        loaded
            .get("metadata-location")
            .and_then(|l| l.as_str())
            .map(str::to_string)
            .ok_or_else(|| {
                catalog_error(
                    catalog,
                    format!("{table}: the answer has no metadata-location (a staged table?)"),
                )
            })
    }
}

/// The REST catalog: its configuration's prefix, then the table.
async fn rest_lookup(catalog: &Catalog, ns: &[&str], name: &str) -> Result<String, Error> {
    RestTable::open(catalog, ns, name)
        .await?
        .metadata_location(catalog)
        .await
}

/// What a REST catalog answered a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RestCommit {
    /// Taken: the catalog applied the updates.
    Committed,
    /// Refused because a requirement no longer holds (409: another writer committed first).
    Conflict,
    /// The server could not say whether the commit was made (500, 502, 504: the spec's
    /// "commit state unknown"); the message says what it answered.
    Unknown(String),
}

/// Commits `requirements` and `updates` (the REST spec's `CommitTableRequest`) to `table`
/// (`NS.TABLE`) of the REST catalog `catalog`.
pub(crate) async fn rest_commit(
    catalog: &Catalog,
    table: &str,
    requirements: serde_json::Value,
    updates: serde_json::Value,
) -> Result<RestCommit, Error> {
    let (ns, name) = identifier(catalog, table)?;
    let rest = RestTable::open(catalog, &ns, name).await?;
    let body = serde_json::json!({
        "identifier": {"namespace": ns, "name": name},
        "requirements": requirements,
        "updates": updates,
    });
    let req = rest.authed(
        rest.client
            .post(rest.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string()),
    );
    let resp = match req.send().await {
        Ok(resp) => resp,
        // Never connected: nothing was sent.
        Err(e) if e.is_connect() => return Err(catalog_error(catalog, e.to_string())),
        // Sent, perhaps taken, and no answer read: as unknown as a 504.
        Err(e) => return Ok(RestCommit::Unknown(format!("committing to {table}: {e}"))),
    };
    let status = resp.status();
    let body = read_capped(catalog, resp).await.unwrap_or_default();
    match status.as_u16() {
        200..=299 => Ok(RestCommit::Committed),
        409 => Ok(RestCommit::Conflict),
        // 503 says the server is not ready: nothing was taken.
        500 | 502 | 504 => Ok(RestCommit::Unknown(format!(
            "committing to {table} answered {status}{}",
            rest_message(&body)
        ))),
        _ => Err(catalog_error(
            catalog,
            format!(
                "committing to {table} answered {status}{}",
                rest_message(&body)
            ),
        )),
    }
}

/// A successful answer's JSON; else an error with the status and the server's message.
fn json_answer(
    catalog: &Catalog,
    what: &str,
    status: reqwest::StatusCode,
    body: &[u8],
) -> Result<serde_json::Value, Error> {
    if !status.is_success() {
        return Err(catalog_error(
            catalog,
            format!("{what} answered {status}{}", rest_message(body)),
        ));
    }
    serde_json::from_slice(body)
        .map_err(|e| catalog_error(catalog, format!("{what}: the answer is not JSON ({e})")))
}

/// A response body, refused past [`MAX_RESPONSE`] bytes.
async fn read_capped(catalog: &Catalog, mut resp: reqwest::Response) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| catalog_error(catalog, e.to_string()))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE {
            return Err(catalog_error(
                catalog,
                format!("an answer over {MAX_RESPONSE} bytes"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `: MESSAGE` from a REST error body (`{"error": {"message": ...}}`), else nothing.
fn rest_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.get("message")?.as_str().map(str::to_string))
        .map(|m| format!(": {m}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_at_the_last_dot() {
        let c = Catalog::new("sqlite:///x.db", None);
        assert_eq!(identifier(&c, "ns.t").unwrap(), (vec!["ns"], "t"));
        assert_eq!(identifier(&c, "a.b.t").unwrap(), (vec!["a", "b"], "t"));
        assert!(identifier(&c, "t").is_err());
        assert!(identifier(&c, "ns.").is_err());
    }

    #[test]
    fn rest_error_messages_are_read() {
        let body = br#"{"error": {"message": "Table does not exist", "code": 404}}"#;
        assert_eq!(rest_message(body), ": Table does not exist");
        assert_eq!(rest_message(b"<html>"), "");
    }

    #[test]
    fn a_copied_warehouse_is_found_below_its_catalog_file() {
        let dir = tempfile::tempdir().unwrap();
        let meta = dir.path().join("copy/ns/t/metadata");
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(meta.join("v3.metadata.json"), b"{}").unwrap();
        let db = dir.path().join("copy/catalog.db");
        let catalog = Catalog::new(&format!("sqlite://{}", db.display()), None);
        let missing = Path::new("/gone/warehouse/ns/t/metadata/v3.metadata.json");
        assert_eq!(
            relocated(&catalog, missing),
            Some(meta.join("v3.metadata.json"))
        );
        // Only a tail of the table folder, `metadata/` and the file: not a lone file name.
        std::fs::write(dir.path().join("copy/v9.metadata.json"), b"{}").unwrap();
        let elsewhere = Path::new("/gone/other/metadata/v9.metadata.json");
        assert_eq!(relocated(&catalog, elsewhere), None);
        // Where the catalog says: as it says; a REST catalog: never relocated.
        let there = meta.join("v3.metadata.json");
        assert_eq!(relocated(&catalog, &there), None);
        let rest = Catalog::new("http://localhost:1/catalog", None);
        assert_eq!(relocated(&rest, missing), None);
    }
}
