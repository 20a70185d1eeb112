//! Probing: which row groups of a column may hold a value, reading only the filter bytes the
//! answer needs.

use crate::header::{BloomFilterHeader, MAX_HEADER_BYTES};
use crate::io::{coalesce, Fetched, IoPolicy, Range};
use crate::value::Encoded;
use crate::ParquetFile;
use parquet::file::reader::ChunkReader;
use sbbf::SbbfRef;
use std::collections::BTreeSet;

/// Bytes read for a header whose length is unknown: a standard header is 15 to 19 bytes.
const HEADER_GUESS: usize = 32;

/// The answer for one value in one row group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The row group may hold the value.
    Maybe,
    /// The row group definitely does not hold the value: it can be skipped.
    Absent,
    /// No usable filter: the row group cannot be skipped.
    Unknown,
}

impl Answer {
    /// `maybe`, `absent` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Maybe => "maybe",
            Answer::Absent => "absent",
            Answer::Unknown => "unknown",
        }
    }
}

/// Whether a row group's column chunk has a usable filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterState {
    /// A valid filter was read.
    Present,
    /// The footer names no filter for this chunk.
    Missing,
    /// The footer names a filter that cannot be used; the reason says why.
    Invalid(String),
}

/// One row group's answers, one per probed value, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowGroupAnswer {
    /// 0-based row group index.
    pub row_group: usize,
    /// Rows in the row group.
    pub num_rows: i64,
    /// Filter state.
    pub filter: FilterState,
    /// One answer per value.
    pub answers: Vec<Answer>,
}

/// Where a chunk's filter is, by the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLocation {
    /// `bloom_filter_offset`.
    pub offset: Option<i64>,
    /// `bloom_filter_length` (header plus bitset), absent in older files.
    pub length: Option<i32>,
}

/// The layout of a filter once its header is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    header_len: u64,
    num_bytes: u64,
}

/// The state of one row group during planning.
enum Plan {
    Done(FilterState),
    /// Header still to be read (no `bloom_filter_length`).
    NeedHeader {
        offset: u64,
    },
    /// Layout known or guessed; `verified` once the header was parsed.
    Ready {
        offset: u64,
        layout: Layout,
        verified: bool,
    },
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Where every row group's filter of leaf `column` is, by the footer.
    pub fn filter_locations(&self, column: usize) -> Vec<FilterLocation> {
        self.metadata()
            .row_groups()
            .iter()
            .map(|rg| {
                let c = rg.column(column);
                FilterLocation {
                    offset: c.bloom_filter_offset(),
                    length: c.bloom_filter_length(),
                }
            })
            .collect()
    }

    /// Probes leaf `column` for `values` in every row group.
    ///
    /// A filter that cannot be read or understood makes its row group [`Answer::Unknown`] with
    /// the reason in [`FilterState::Invalid`]; it never makes anything [`Answer::Absent`], and
    /// the other row groups are still answered.
    ///
    /// ```no_run
    /// use sbbf_parquet::{ParquetFile, value::{encode_text, EncodeOptions}, IoPolicy};
    /// let pq = ParquetFile::open(std::fs::File::open("data.parquet")?)?;
    /// let col = pq.column_index("user_id")?;
    /// let v = encode_text(&pq.columns()[col], "42", EncodeOptions::default())?;
    /// for rg in pq.probe(col, &[v], IoPolicy::default()) {
    ///     println!("row group {}: {:?}", rg.row_group, rg.answers[0]);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe(
        &self,
        column: usize,
        values: &[Encoded],
        policy: IoPolicy,
    ) -> Vec<RowGroupAnswer> {
        let hashes: Vec<u64> = values
            .iter()
            .flat_map(|v| match v {
                Encoded::Candidates(c) => c.iter().map(|b| sbbf::hash(b)).collect(),
                _ => Vec::new(),
            })
            .collect();
        let locations = self.filter_locations(column);
        let mut plans: Vec<Plan> = locations
            .iter()
            .map(|loc| self.initial_plan(*loc))
            .collect();
        if hashes.is_empty() {
            // Nothing to read: every value is decided without filters. Still tell missing
            // filters apart from present ones by the footer.
            for p in plans.iter_mut() {
                if !matches!(p, Plan::Done(_)) {
                    *p = Plan::Done(FilterState::Present);
                }
            }
        }

        // Round 1: headers of filters whose length the footer does not give. A standard header
        // is at most 19 bytes; a longer one (fields from a future writer) is read again whole.
        for window in [HEADER_GUESS, MAX_HEADER_BYTES] {
            let header_ranges: Vec<Range> = plans
                .iter()
                .filter_map(|p| match p {
                    Plan::NeedHeader { offset } => Some(self.header_range(*offset, window)),
                    _ => None,
                })
                .collect();
            if header_ranges.is_empty() {
                break;
            }
            let fetched = Fetched::read(self.reader(), &coalesce(header_ranges, policy.max_gap));
            for (i, p) in plans.iter_mut().enumerate() {
                if let Plan::NeedHeader { offset } = *p {
                    let r = self.header_range(offset, window);
                    let length = locations[i].length.map(|l| l as u64);
                    let parsed = fetched
                        .get(r.start, r.end - r.start)
                        .map_err(|e| format!("cannot read the filter header: {e}"))
                        .and_then(|b| BloomFilterHeader::parse(&b).map_err(|e| e.to_string()));
                    *p = match parsed {
                        Ok((h, len)) => {
                            self.checked_ready(offset, len as u64, h.num_bytes as u64, length, true)
                        }
                        Err(_) if window < MAX_HEADER_BYTES && r.end - r.start == window as u64 => {
                            Plan::NeedHeader { offset }
                        }
                        Err(e) => Plan::Done(FilterState::Invalid(e)),
                    };
                }
            }
        }

        // Round 2: headers not yet verified, and the bitset bytes the hashes need.
        let mut ranges = Vec::new();
        for p in &plans {
            if let Plan::Ready {
                offset,
                layout,
                verified,
            } = p
            {
                ranges.extend(needed_ranges(*offset, *layout, *verified, &hashes, policy));
            }
        }
        let fetched = Fetched::read(self.reader(), &coalesce(ranges, policy.max_gap));

        // A header that disagrees with the guessed layout (extra fields from a future writer)
        // needs one more, exact round.
        let mut retry = Vec::new();
        for (i, p) in plans.iter_mut().enumerate() {
            if let Plan::Ready {
                offset,
                layout,
                verified: false,
            } = *p
            {
                let check = fetched
                    .get(offset, layout.header_len)
                    .map_err(|e| format!("cannot read the filter header: {e}"))
                    .and_then(|b| BloomFilterHeader::parse(&b).map_err(|e| e.to_string()));
                match check {
                    Ok((h, len))
                        if len as u64 == layout.header_len
                            && h.num_bytes as u64 == layout.num_bytes =>
                    {
                        *p = Plan::Ready {
                            offset,
                            layout,
                            verified: true,
                        };
                    }
                    // Parsing a guessed-length window can fail only because the real header is
                    // longer than the standard one; read it exactly.
                    _ => retry.push(i),
                }
            }
        }
        let mut extra = Fetched::default();
        if !retry.is_empty() {
            let header_ranges: Vec<Range> = retry
                .iter()
                .filter_map(|i| match plans[*i] {
                    Plan::Ready { offset, .. } => Some(self.header_range(offset, MAX_HEADER_BYTES)),
                    _ => None,
                })
                .collect();
            let headers = Fetched::read(self.reader(), &coalesce(header_ranges, policy.max_gap));
            let mut ranges = Vec::new();
            for i in &retry {
                if let Plan::Ready { offset, .. } = plans[*i] {
                    let r = self.header_range(offset, MAX_HEADER_BYTES);
                    let length = locations[*i].length.map(|l| l as u64);
                    plans[*i] = match headers
                        .get(r.start, r.end - r.start)
                        .map_err(|e| format!("cannot read the filter header: {e}"))
                        .and_then(|b| BloomFilterHeader::parse(&b).map_err(|e| e.to_string()))
                    {
                        Ok((h, len)) => {
                            self.checked_ready(offset, len as u64, h.num_bytes as u64, length, true)
                        }
                        Err(e) => Plan::Done(FilterState::Invalid(e)),
                    };
                    if let Plan::Ready { offset, layout, .. } = plans[*i] {
                        ranges.extend(needed_ranges(offset, layout, true, &hashes, policy));
                    }
                }
            }
            extra = Fetched::read(self.reader(), &coalesce(ranges, policy.max_gap));
        }

        let meta = self.metadata();
        plans
            .into_iter()
            .enumerate()
            .map(|(rg, plan)| {
                let num_rows = meta.row_group(rg).num_rows();
                let (filter, answers) = match plan {
                    Plan::Done(state) => {
                        let answers = values
                            .iter()
                            .map(|v| decide(v, &state, |_| unreachable_maybe()))
                            .collect();
                        (state, answers)
                    }
                    Plan::Ready { offset, layout, .. } => {
                        let bitset_start = offset + layout.header_len;
                        let blocks = (layout.num_bytes / 32) as usize;
                        let lookup = |h: u64| -> Result<bool, String> {
                            let i = sbbf::block_index(h, blocks) as u64;
                            let b = fetched
                                .get(bitset_start + i * 32, 32)
                                .or_else(|_| extra.get(bitset_start + i * 32, 32))?;
                            let view = SbbfRef::new(&b).map_err(|e| e.to_string())?;
                            Ok(view.contains_hash(h))
                        };
                        // Any read failure for this filter makes the whole row group unknown.
                        let mut failure = None;
                        let answers: Vec<Answer> = values
                            .iter()
                            .map(|v| {
                                decide(v, &FilterState::Present, |h| match lookup(h) {
                                    Ok(m) => m,
                                    Err(e) => {
                                        failure.get_or_insert(e);
                                        true
                                    }
                                })
                            })
                            .collect();
                        match failure {
                            None => (FilterState::Present, answers),
                            Some(e) => {
                                let state =
                                    FilterState::Invalid(format!("cannot read the filter: {e}"));
                                let answers =
                                    values.iter().map(|v| decide(v, &state, |_| true)).collect();
                                (state, answers)
                            }
                        }
                    }
                    Plan::NeedHeader { .. } => unreachable!("headers are read in round 1"),
                };
                RowGroupAnswer {
                    row_group: rg,
                    num_rows,
                    filter,
                    answers,
                }
            })
            .collect()
    }

    /// The `len` bytes a header may occupy from `offset`, never into the footer.
    fn header_range(&self, offset: u64, len: usize) -> Range {
        Range {
            start: offset,
            end: (offset + len as u64).min(self.footer_start()).max(offset),
        }
    }

    fn initial_plan(&self, loc: FilterLocation) -> Plan {
        let Some(offset) = loc.offset else {
            return Plan::Done(FilterState::Missing);
        };
        let invalid = |s: String| Plan::Done(FilterState::Invalid(s));
        let footer = self.footer_start();
        if offset < 4 || offset as u64 >= footer {
            return invalid(format!(
                "bloom_filter_offset {offset} is outside the data area [4, {footer})"
            ));
        }
        let offset = offset as u64;
        match loc.length {
            None => Plan::NeedHeader { offset },
            Some(len) if len <= 0 => invalid(format!("bloom_filter_length {len} is not positive")),
            Some(len) => {
                let len = len as u64;
                if offset + len > footer {
                    return invalid(format!(
                        "bloom_filter_length {len} at offset {offset} runs past the data area (footer at {footer})"
                    ));
                }
                match BloomFilterHeader::num_bytes_for_total(len as i64) {
                    Some(n) => Plan::Ready {
                        offset,
                        layout: Layout {
                            header_len: BloomFilterHeader::encoded_len(n) as u64,
                            num_bytes: n as u64,
                        },
                        verified: false,
                    },
                    // Not a standard header plus a valid size: read the header to find out.
                    None => Plan::Ready {
                        offset,
                        layout: Layout {
                            header_len: u64::MAX,
                            num_bytes: 0,
                        },
                        verified: false,
                    },
                }
            }
        }
        .fix_unknown_layout()
    }

    /// Validates a parsed header's layout against the file and the footer's length.
    fn checked_ready(
        &self,
        offset: u64,
        header_len: u64,
        num_bytes: u64,
        length: Option<u64>,
        verified: bool,
    ) -> Plan {
        let end = offset + header_len + num_bytes;
        if end > self.footer_start() {
            return Plan::Done(FilterState::Invalid(format!(
                "the filter ({header_len}-byte header + {num_bytes}-byte bitset at offset {offset}) runs past the data area (footer at {})",
                self.footer_start()
            )));
        }
        if let Some(l) = length {
            if l != header_len + num_bytes {
                return Plan::Done(FilterState::Invalid(format!(
                    "bloom_filter_length {l} disagrees with the header ({header_len}-byte header + {num_bytes}-byte bitset)"
                )));
            }
        }
        Plan::Ready {
            offset,
            layout: Layout {
                header_len,
                num_bytes,
            },
            verified,
        }
    }
}

impl Plan {
    /// A length that matches no standard layout: treat like a missing length (read the header
    /// first), the length is checked against the header afterwards.
    fn fix_unknown_layout(self) -> Plan {
        match self {
            Plan::Ready { offset, layout, .. } if layout.header_len == u64::MAX => {
                Plan::NeedHeader { offset }
            }
            p => p,
        }
    }
}

fn unreachable_maybe() -> bool {
    true
}

/// The answer for one value given the filter state and a probe function for present filters.
fn decide(v: &Encoded, state: &FilterState, mut probe: impl FnMut(u64) -> bool) -> Answer {
    match v {
        Encoded::NeverStored(_) => Answer::Absent,
        Encoded::AlwaysMaybe(_) => match state {
            FilterState::Present => Answer::Maybe,
            _ => Answer::Unknown,
        },
        Encoded::Candidates(c) => match state {
            FilterState::Present => {
                // Probe every candidate (no short cut) so read failures are always noticed.
                let mut any = false;
                for b in c {
                    any |= probe(sbbf::hash(b));
                }
                if any {
                    Answer::Maybe
                } else {
                    Answer::Absent
                }
            }
            _ => Answer::Unknown,
        },
    }
}

/// The byte ranges a probe of `hashes` needs from one filter, by the cost rule of [`IoPolicy`].
fn needed_ranges(
    offset: u64,
    layout: Layout,
    header_verified: bool,
    hashes: &[u64],
    policy: IoPolicy,
) -> Vec<Range> {
    let bitset = offset + layout.header_len;
    let blocks = (layout.num_bytes / 32) as usize;
    let needed: BTreeSet<u64> = hashes
        .iter()
        .map(|h| sbbf::block_index(*h, blocks) as u64)
        .collect();
    let mut out = Vec::new();
    if !header_verified {
        out.push(Range {
            start: offset,
            end: bitset,
        });
    }
    if layout.num_bytes <= needed.len() as u64 * policy.request_cost {
        out.push(Range {
            start: bitset,
            end: bitset + layout.num_bytes,
        });
    } else {
        out.extend(needed.iter().map(|i| Range {
            start: bitset + i * 32,
            end: bitset + i * 32 + 32,
        }));
    }
    out
}
