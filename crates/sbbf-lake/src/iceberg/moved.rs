//! A table read from a folder other than the one its metadata names as its `location` (a
//! copied or moved table: a backup, a fixture in a clone, a prefix copied between buckets).
//! Iceberg names every file by its whole location, so such a table's manifests still name
//! the files where it was written, which may be gone or hold another state of the table. Its
//! metadata file, manifest lists, manifests, data and delete files are read below the folder
//! it was found in, at the same paths below it: the metadata read together with the files
//! beside it, as DuckDB's `allow_moved_paths` reads a moved table.

use url::Url;

/// The table folder of a metadata file in its table's `metadata/` folder (`T/metadata/F`:
/// `T/`); `None` when the file's folder is named otherwise.
pub(crate) fn table_folder_of(metadata_file: &Url) -> Option<Url> {
    let segments: Vec<&str> = metadata_file.path_segments()?.collect();
    match segments.as_slice() {
        [.., "metadata", file] if !file.is_empty() => metadata_file.join("../").ok(),
        _ => None,
    }
}

/// Where a moved table's locations are read: the prefixes its metadata writes them under,
/// and the folder it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The table's `location` as the metadata writes it, and the same place spelled the
    /// other way a local location may be (`file:///t` and `/t`), each ending in `/`.
    from: Vec<String>,
    /// The folder found, as a location (a local absolute path, or a store URL), ending in
    /// `/`.
    to: String,
    /// The metadata's own `location`, for messages.
    pub(crate) said: String,
}

impl Moved {
    /// The relocation of a table whose metadata, which says the table lives at `recorded`,
    /// was found below the folder `found`; `None` when `recorded` is this folder.
    pub(crate) fn of(recorded: &str, found: &Url) -> Option<Moved> {
        let location = recorded.trim_end_matches('/');
        if location.is_empty() {
            return None;
        }
        let said = match location.starts_with('/') {
            true => Url::from_directory_path(location).ok(),
            false => Url::parse(&format!("{location}/")).ok(),
        };
        if let Some(said) = &said {
            let same = said.scheme() == found.scheme()
                && said.host_str() == found.host_str()
                && said.path() == found.path();
            if same {
                return None;
            }
        }
        let to = match found.scheme() {
            "file" => {
                let path = found.to_file_path().ok()?;
                format!("{}/", path.to_str()?.trim_end_matches('/'))
            }
            _ => found.as_str().to_string(),
        };
        let mut from = vec![format!("{location}/")];
        if let Some(bare) = location.strip_prefix("file://") {
            from.push(format!("{bare}/"));
        } else if location.starts_with('/') {
            from.push(format!("file://{location}/"));
        }
        Some(Moved {
            from,
            to,
            said: recorded.to_string(),
        })
    }

    /// Where `location` (a location the table's files write) is read: below the folder found
    /// when it lies below the table's recorded location, else as written.
    pub(crate) fn at(&self, location: &str) -> String {
        for prefix in &self.from {
            if let Some(rest) = location.strip_prefix(prefix.as_str()) {
                return format!("{}{rest}", self.to);
            }
        }
        location.to_string()
    }
}

/// [`Moved::at`] when there is a relocation, else `location` itself.
pub(crate) fn at(moved: Option<&Moved>, location: &str) -> String {
    match moved {
        Some(m) => m.at(location),
        None => location.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(location: &str, found: &str) -> Option<Moved> {
        Moved::of(location, &Url::parse(found).unwrap())
    }

    #[test]
    fn locations_below_the_recorded_folder_are_read_below_the_found_one() {
        let m = moved("file:///tmp/w/ns/t", "file:///home/me/copy/t/").unwrap();
        assert_eq!(
            m.at("file:///tmp/w/ns/t/data/a.parquet"),
            "/home/me/copy/t/data/a.parquet"
        );
        assert_eq!(
            m.at("/tmp/w/ns/t/metadata/snap-1.avro"),
            "/home/me/copy/t/metadata/snap-1.avro"
        );
        // Elsewhere (a migrated table's file in another folder): as written.
        assert_eq!(m.at("file:///other/x.parquet"), "file:///other/x.parquet");
        // A folder whose name only starts like the table's is not below it.
        assert_eq!(
            m.at("file:///tmp/w/ns/t2/a.parquet"),
            "file:///tmp/w/ns/t2/a.parquet"
        );
        let s3 = moved("s3://old/t", "s3://new/backup/t/").unwrap();
        assert_eq!(
            s3.at("s3://old/t/data/a.parquet"),
            "s3://new/backup/t/data/a.parquet"
        );
    }

    #[test]
    fn a_table_read_where_its_metadata_says_is_not_moved() {
        assert_eq!(moved("file:///tmp/w/t", "file:///tmp/w/t/"), None);
        assert_eq!(moved("/tmp/w/t/", "file:///tmp/w/t/"), None);
        assert_eq!(moved("s3://b/t", "s3://b/t/"), None);
    }

    #[test]
    fn a_metadata_file_names_its_table_folder_only_from_a_metadata_folder() {
        let folder = |u: &str| table_folder_of(&Url::parse(u).unwrap()).map(|f| f.to_string());
        assert_eq!(
            folder("file:///w/ns/t/metadata/v3.metadata.json").as_deref(),
            Some("file:///w/ns/t/")
        );
        assert_eq!(
            folder("s3://b/t/metadata/00001-x.metadata.json").as_deref(),
            Some("s3://b/t/")
        );
        assert_eq!(folder("file:///w/t/meta/v3.metadata.json"), None);
        assert_eq!(folder("file:///w/t/metadata/"), None);
    }
}
