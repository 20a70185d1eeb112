//! Which byte ranges of a file the footer gives to which column chunk: data pages (dictionary
//! page first), column indexes and offset indexes. Filters are not listed: where one ends is
//! known only from its header (or a `bloom_filter_length` that may be absent or wrong), so
//! callers add them with [`Region::filter`] once they know.
//!
//! Nothing here is trusted: a footer may give negative offsets or lengths (those ranges are
//! listed in [`Layout::malformed`], not as regions) and overlapping ranges.

use parquet::file::metadata::ParquetMetaData;

/// What a region holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum RegionKind {
    /// The chunk's pages, from the dictionary page (if any) for `total_compressed_size` bytes.
    Data,
    /// The chunk's column index (page statistics).
    ColumnIndex,
    /// The chunk's offset index (page locations).
    OffsetIndex,
    /// The chunk's Bloom filter, header and bitset.
    Filter,
}

/// A byte range `[start, end)` that the footer gives to one column chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    /// What the bytes are.
    pub kind: RegionKind,
    /// Row group.
    pub row_group: usize,
    /// Leaf column.
    pub column: usize,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl Region {
    /// The filter of `(row_group, column)`, occupying `[start, end)`.
    pub fn filter(row_group: usize, column: usize, start: u64, end: u64) -> Region {
        Region {
            kind: RegionKind::Filter,
            row_group,
            column,
            start,
            end,
        }
    }

    /// Whether the two ranges share a byte.
    pub fn overlaps(&self, other: &Region) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// "the data pages of `a.b` in row group 3", given the chunk's column path.
    pub fn describe(&self, column_path: &str) -> String {
        let what = match self.kind {
            RegionKind::Data => "the data pages",
            RegionKind::ColumnIndex => "the column index",
            RegionKind::OffsetIndex => "the offset index",
            RegionKind::Filter => "the Bloom filter",
        };
        format!("{what} of `{column_path}` in row group {}", self.row_group)
    }
}

/// The regions of every column chunk, as the footer states them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    /// Data pages and page indexes, row group by row group, column by column.
    pub regions: Vec<Region>,
    /// Ranges the footer gives with a negative offset or length: `(kind, row group, column)`.
    pub malformed: Vec<(RegionKind, usize, usize)>,
}

impl Layout {
    /// Reads the layout from the decoded footer. Does not look at any file bytes.
    pub fn of(meta: &ParquetMetaData) -> Layout {
        let mut out = Layout::default();
        for (r, rg) in meta.row_groups().iter().enumerate() {
            for (c, col) in rg.columns().iter().enumerate() {
                // Not `byte_range()`: it asserts, and a hostile footer may hold negative values.
                let data_start = col
                    .dictionary_page_offset()
                    .unwrap_or(col.data_page_offset());
                let ranges = [
                    (RegionKind::Data, Some((data_start, col.compressed_size()))),
                    (
                        RegionKind::ColumnIndex,
                        col.column_index_offset()
                            .zip(col.column_index_length().map(i64::from)),
                    ),
                    (
                        RegionKind::OffsetIndex,
                        col.offset_index_offset()
                            .zip(col.offset_index_length().map(i64::from)),
                    ),
                ];
                for (kind, range) in ranges {
                    let Some((start, len)) = range else { continue };
                    match (u64::try_from(start), u64::try_from(len)) {
                        (Ok(start), Ok(len)) => out.regions.push(Region {
                            kind,
                            row_group: r,
                            column: c,
                            start,
                            end: start.saturating_add(len),
                        }),
                        _ => out.malformed.push((kind, r, c)),
                    }
                }
            }
        }
        out
    }

    /// The regions `r` shares bytes with (empty regions share none).
    pub fn overlapping<'a>(&'a self, r: &'a Region) -> impl Iterator<Item = &'a Region> + 'a {
        self.regions.iter().filter(move |o| o.overlaps(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_of_a_real_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/pa_ints.parquet"
        );
        let pq = crate::ParquetFile::open(std::fs::File::open(path).unwrap()).unwrap();
        let layout = Layout::of(pq.metadata());
        assert!(layout.malformed.is_empty());
        let chunks = pq.metadata().num_row_groups() * pq.columns().len();
        let data: Vec<_> = layout
            .regions
            .iter()
            .filter(|r| r.kind == RegionKind::Data)
            .collect();
        assert_eq!(data.len(), chunks);
        for (i, a) in data.iter().enumerate() {
            assert!(a.start >= 4 && a.end <= pq.footer_start(), "{a:?}");
            for b in &data[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
        }
        let r = Region::filter(0, 0, data[0].start, data[0].start + 1);
        assert_eq!(layout.overlapping(&r).count(), 1);
        assert_eq!(
            data[0].describe("x"),
            format!("the data pages of `x` in row group {}", data[0].row_group)
        );
    }
}
