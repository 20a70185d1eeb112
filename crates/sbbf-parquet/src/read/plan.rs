//! The probe as a state machine without I/O: it says which byte ranges it needs, is handed the
//! bytes, and finally answers. The one sync driver ([`run`]) and the one async driver
//! (`ParquetFile::drive` in [`crate::read::async_driver`]) only move bytes, so both share every rule here.

#[cfg(feature = "encryption")]
use crate::crypto::{FilterCrypto, OpenFilter, SealedFilter, Step, SEALED_BITSET_OVERHEAD};
use crate::format::header::{BloomFilterHeader, MAX_HEADER_BYTES};
use crate::io::{coalesce, Fetched, IoCounters, IoPolicy, Range};
use crate::read::answer::{
    candidate_hashes, decide, Answer, FilterLocation, FilterState, NoFilter, RowGroupAnswer,
};
use crate::values::stored::Encoded;
use bytes::Bytes;
use parquet::file::reader::ChunkReader;
use sbbf::SbbfRef;
use std::sync::Arc;

/// Bytes read for a header whose length is unknown: a standard header is 15 to 19 bytes.
const HEADER_GUESS: usize = 32;

/// Where a filter's bitset is once its header is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    header_len: u64,
    num_bytes: u64,
}

#[derive(Debug, Clone)]
enum Plan {
    /// No filter to read (the footer's locations, or what reading found).
    Done(NoFilter),
    /// The header must be read (no usable `bloom_filter_length`), `window` bytes at a time.
    NeedHeader { offset: u64, window: usize },
    /// Layout known (`verified`: parsed) or guessed from `bloom_filter_length`; `fetched` once
    /// the bitset bytes the probe needs have been read.
    Ready {
        offset: u64,
        layout: Layout,
        verified: bool,
        fetched: bool,
    },
    /// An encrypted filter: two GCM modules, each read and authenticated whole.
    #[cfg(feature = "encryption")]
    Sealed(SealedFilter),
    /// An encrypted filter, decrypted and authenticated.
    #[cfg(feature = "encryption")]
    Opened(OpenFilter),
}

/// A filter read whole: header at `offset`, `header_len` bytes, then the bitset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSpan {
    /// Offset of the header.
    pub offset: u64,
    /// Bytes of the header (of an encrypted filter: the header module, length included).
    pub header_len: u64,
    /// The bitset (of an encrypted filter: decrypted).
    pub bitset: Bytes,
    /// Bytes the stored bitset takes beyond the bitset itself: 0, or for an encrypted filter
    /// the module's length prefix, nonce and tag (32).
    pub sealed_overhead: u64,
}

impl FilterSpan {
    /// One past the last byte of the stored filter.
    pub fn end(&self) -> u64 {
        self.offset + self.header_len + self.sealed_overhead + self.bitset.len() as u64
    }
}

/// What a job reads of each filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// The blocks the hashes need, or the whole bitset when the cost rule says so.
    Blocks,
    /// Always the whole bitset (to keep the filters for later probes).
    Whole,
}

/// One column's filters across row groups, being read: to probe the values it owns, or to
/// keep the filters whole.
#[derive(Debug)]
pub(crate) struct ProbeJob {
    plans: Vec<Plan>,
    lengths: Vec<Option<u64>>,
    num_rows: Vec<i64>,
    /// Shared: the values of a run over many files are encoded once per column type and
    /// probed by every file's job ([`crate::source::Source::probe`]).
    values: Arc<[Encoded]>,
    /// Shared: a key set hashed once serves every file of a scan ([`crate::prune::PreparedPredicate`]).
    hashes: Arc<[u64]>,
    /// Set when the job answers one thing per row group, whether any of its values may be
    /// present (a pruning leaf), instead of one answer per value: `values` is then empty.
    any: Option<AnyOf>,
    footer_start: u64,
    policy: IoPolicy,
    want: Want,
    fetched: Fetched,
}

impl ProbeJob {
    /// A job probing `values` in the filters at `locations` (one per row group, with the row
    /// counts in `num_rows`), in a file whose footer starts at `footer_start`.
    pub(crate) fn new(
        locations: &[FilterLocation],
        num_rows: Vec<i64>,
        footer_start: u64,
        values: Vec<Encoded>,
        policy: IoPolicy,
    ) -> ProbeJob {
        ProbeJob::build(
            locations,
            num_rows,
            footer_start,
            values,
            policy,
            Want::Blocks,
        )
    }

    /// [`ProbeJob::new`] for values already encoded and hashed ([`candidate_hashes`] order),
    /// shared with other jobs instead of copied into each.
    pub(crate) fn shared(
        locations: &[FilterLocation],
        num_rows: Vec<i64>,
        footer_start: u64,
        values: Arc<[Encoded]>,
        hashes: Arc<[u64]>,
        policy: IoPolicy,
    ) -> ProbeJob {
        let mut job = ProbeJob::build(
            locations,
            num_rows,
            footer_start,
            Vec::new(),
            policy,
            Want::Blocks,
        );
        job.values = values;
        job.hashes = hashes;
        job
    }

    /// A job that reads every filter whole, to keep them ([`ProbeJob::into_spans`]).
    pub(crate) fn whole(
        locations: &[FilterLocation],
        num_rows: Vec<i64>,
        footer_start: u64,
        policy: IoPolicy,
    ) -> ProbeJob {
        ProbeJob::build(
            locations,
            num_rows,
            footer_start,
            Vec::new(),
            policy,
            Want::Whole,
        )
    }

    /// A job answering, per row group, whether any of a set of values may be present (one
    /// answer each, in [`RowGroupAnswer::answers`]): the values are given as the candidate
    /// hashes and the [`AnyOf`] summary [`AnyOf::encode`] makes of them, so a key set of any
    /// size is held as its hashes alone.
    pub(crate) fn any_of(
        locations: &[FilterLocation],
        num_rows: Vec<i64>,
        footer_start: u64,
        hashes: Arc<[u64]>,
        any: AnyOf,
        policy: IoPolicy,
    ) -> ProbeJob {
        let mut job = ProbeJob::build(
            locations,
            num_rows,
            footer_start,
            Vec::new(),
            policy,
            Want::Blocks,
        );
        job.hashes = hashes;
        job.any = Some(any);
        job
    }

    fn build(
        locations: &[FilterLocation],
        num_rows: Vec<i64>,
        footer_start: u64,
        values: Vec<Encoded>,
        policy: IoPolicy,
        want: Want,
    ) -> ProbeJob {
        let hashes = candidate_hashes(&values).into();
        let plans = locations
            .iter()
            .map(|l| initial_plan(*l, footer_start))
            .collect();
        ProbeJob {
            plans,
            lengths: locations
                .iter()
                .map(|l| l.length.filter(|n| *n > 0).map(|n| n as u64))
                .collect(),
            num_rows,
            values: values.into(),
            hashes,
            any: None,
            footer_start,
            policy,
            want,
            fetched: Fetched::default(),
        }
    }

    /// Applies the file's encryption, one entry per row group: an encrypted filter is read as
    /// two modules with its key; one that cannot be decrypted answers "unknown" with the
    /// reason, whatever the footer says of it (a chunk whose metadata did not decrypt shows
    /// no filter location, which must not read as "no filter").
    #[cfg(feature = "encryption")]
    pub(crate) fn with_crypto(mut self, crypto: Vec<FilterCrypto>) -> ProbeJob {
        for (rg, c) in crypto.into_iter().enumerate() {
            let Some(plan) = self.plans.get_mut(rg) else {
                continue;
            };
            match c {
                FilterCrypto::Plain => {}
                FilterCrypto::Unreadable(why) => {
                    *plan = Plan::Done(NoFilter::Invalid(format!("encrypted: {why}")))
                }
                FilterCrypto::Sealed(key) => {
                    if let Some(offset) = plan_offset(plan) {
                        let length = self.lengths[rg];
                        *plan =
                            Plan::Sealed(SealedFilter::new(offset, length, self.footer_start, key));
                    }
                }
            }
        }
        self
    }

    /// Makes row group `rg`'s filter unusable for a reason found outside the job (in the
    /// footer): it answers "unknown" and none of its bytes are read.
    pub(crate) fn invalidate(&mut self, rg: usize, reason: String) {
        if let Some(p) = self.plans.get_mut(rg) {
            if !matches!(p, Plan::Done(_)) {
                *p = Plan::Done(NoFilter::Invalid(reason));
            }
        }
    }

    /// The merged byte ranges to read next, or `None` when the job has all it needs.
    pub(crate) fn next_reads(&self) -> Option<Vec<Range>> {
        let mut ranges = Vec::new();
        for p in &self.plans {
            match p {
                Plan::NeedHeader { offset, window } => {
                    ranges.push(self.header_range(*offset, *window))
                }
                Plan::Ready {
                    offset,
                    layout,
                    verified,
                    fetched: false,
                } => ranges.extend(self.needed_ranges(*offset, *layout, *verified)),
                #[cfg(feature = "encryption")]
                Plan::Sealed(f) => ranges.push(f.next_read()),
                _ => {}
            }
        }
        if self
            .plans
            .iter()
            .all(|p| matches!(p, Plan::Done(_) | Plan::Ready { fetched: true, .. }) || is_opened(p))
        {
            None
        } else {
            Some(coalesce(ranges, self.policy.max_gap))
        }
    }

    /// Hands the job the bytes of the ranges [`ProbeJob::next_reads`] asked for (a failed read
    /// is passed as an error and makes the filters it held "invalid").
    pub(crate) fn supply(&mut self, fetched: Fetched) {
        self.fetched.extend(fetched);
        let plans = std::mem::take(&mut self.plans);
        self.plans = plans
            .into_iter()
            .enumerate()
            .map(|(i, p)| self.advance(i, p))
            .collect();
    }

    fn advance(&self, i: usize, p: Plan) -> Plan {
        match p {
            Plan::NeedHeader { offset, window } => {
                let r = self.header_range(offset, window);
                match self.parse_header(r) {
                    Ok((h, len)) => {
                        self.checked_ready(offset, len as u64, h.num_bytes as u64, self.lengths[i])
                    }
                    // A header longer than the first guess: read the most a header may take.
                    Err(_) if window < MAX_HEADER_BYTES && r.end - r.start == window as u64 => {
                        Plan::NeedHeader {
                            offset,
                            window: MAX_HEADER_BYTES,
                        }
                    }
                    Err(e) => Plan::Done(NoFilter::Invalid(e)),
                }
            }
            Plan::Ready {
                offset,
                layout,
                verified: false,
                fetched: false,
            } => {
                let r = Range {
                    start: offset,
                    end: offset + layout.header_len,
                };
                match self.parse_header(r) {
                    Ok((h, len))
                        if len as u64 == layout.header_len
                            && h.num_bytes as u64 == layout.num_bytes =>
                    {
                        Plan::Ready {
                            offset,
                            layout,
                            verified: true,
                            fetched: true,
                        }
                    }
                    // The guess from `bloom_filter_length` was wrong (a non-standard header, or
                    // a corrupt length): read the header properly, then check the length.
                    _ => Plan::NeedHeader {
                        offset,
                        window: MAX_HEADER_BYTES,
                    },
                }
            }
            Plan::Ready {
                offset,
                layout,
                verified,
                fetched: false,
            } => Plan::Ready {
                offset,
                layout,
                verified,
                fetched: true,
            },
            #[cfg(feature = "encryption")]
            Plan::Sealed(f) => match f.advance(&self.fetched) {
                Step::Pending(f) => Plan::Sealed(f),
                Step::Open(o) => Plan::Opened(o),
                Step::Failed(why) => Plan::Done(NoFilter::Invalid(why)),
            },
            done => done,
        }
    }

    fn parse_header(&self, r: Range) -> Result<(BloomFilterHeader, usize), String> {
        let b = self
            .fetched
            .get(r.start, r.end - r.start)
            .map_err(|e| format!("cannot read the filter header: {e}"))?;
        BloomFilterHeader::parse(&b).map_err(|e| e.to_string())
    }

    fn header_range(&self, offset: u64, len: usize) -> Range {
        Range {
            start: offset,
            end: (offset + len as u64).min(self.footer_start).max(offset),
        }
    }

    /// Validates a parsed header's layout against the data area and the footer's length.
    fn checked_ready(
        &self,
        offset: u64,
        header_len: u64,
        num_bytes: u64,
        length: Option<u64>,
    ) -> Plan {
        let end = offset + header_len + num_bytes;
        if end > self.footer_start {
            return Plan::Done(NoFilter::Invalid(format!(
                "the filter ({header_len}-byte header + {num_bytes}-byte bitset at offset {offset}) runs past the data area (footer at {})",
                self.footer_start
            )));
        }
        if let Some(l) = length {
            if l != header_len + num_bytes {
                return Plan::Done(NoFilter::Invalid(format!(
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
            verified: true,
            fetched: false,
        }
    }

    /// The byte ranges one filter needs, by the cost rule of [`IoPolicy`]: `k` separate blocks
    /// cost `k * request_cost`, the whole bitset costs its size; the cheaper wins.
    fn needed_ranges(&self, offset: u64, layout: Layout, header_verified: bool) -> Vec<Range> {
        let bitset = offset + layout.header_len;
        let blocks = (layout.num_bytes / 32) as usize;
        let mut out = Vec::new();
        if !header_verified {
            out.push(Range {
                start: offset,
                end: bitset,
            });
        }
        // The distinct blocks the hashes fall in, as a bitmap (a key set of 100,000 hashes
        // costs one pass, not a sorted set per filter), stopping as soon as enough distinct
        // blocks make the whole bitset the cheaper read.
        let whole_at = layout
            .num_bytes
            .div_ceil(self.policy.request_cost.max(1))
            .max(1);
        let mut seen = vec![0u64; blocks.div_ceil(64)];
        let mut distinct = 0u64;
        let mut whole = self.want == Want::Whole;
        if !whole {
            for h in self.hashes.iter() {
                let i = sbbf::block_index(*h, blocks);
                let (w, b) = (i / 64, 1u64 << (i % 64));
                if seen[w] & b == 0 {
                    seen[w] |= b;
                    distinct += 1;
                    if distinct >= whole_at {
                        whole = true;
                        break;
                    }
                }
            }
        }
        if whole {
            out.push(Range {
                start: bitset,
                end: bitset + layout.num_bytes,
            });
        } else {
            for (w, word) in seen.iter().enumerate() {
                let mut word = *word;
                while word != 0 {
                    let i = (w * 64 + word.trailing_zeros() as usize) as u64;
                    word &= word - 1;
                    out.push(Range {
                        start: bitset + i * 32,
                        end: bitset + i * 32 + 32,
                    });
                }
            }
        }
        out
    }

    /// The answers, one per row group, for the job's values.
    pub(crate) fn finish(self) -> Vec<RowGroupAnswer> {
        // One answer slot per hash, reused across row groups.
        let mut hits = vec![false; self.hashes.len()];
        self.plans
            .iter()
            .enumerate()
            .map(|(rg, plan)| {
                let (filter, answers) = match plan {
                    Plan::Done(why) => {
                        let state = FilterState::from(why.clone());
                        let answers = self.answers(&state, &[]);
                        (state, answers)
                    }
                    Plan::Ready { offset, layout, .. } => {
                        let start = offset + layout.header_len;
                        // The whole bitset when it was read (the cost rule's choice for a big
                        // key set): one view, the batch kernel over every hash.
                        let whole = self.fetched.get(start, layout.num_bytes).ok();
                        let blocks = (layout.num_bytes / 32) as usize;
                        self.answer_present(whole, blocks, &mut hits, |i| {
                            self.fetched.get(start + i * 32, 32)
                        })
                    }
                    #[cfg(feature = "encryption")]
                    Plan::Opened(OpenFilter { bitset, .. }) => {
                        let blocks = bitset.len() / 32;
                        self.answer_present(Some(bitset.clone()), blocks, &mut hits, |i| {
                            let i = i as usize;
                            Ok(bitset.slice(i * 32..i * 32 + 32))
                        })
                    }
                    _ => {
                        let state = FilterState::Invalid("the filter header was never read".into());
                        let answers = self.answers(&state, &[]);
                        (state, answers)
                    }
                };
                RowGroupAnswer {
                    row_group: rg,
                    num_rows: self.num_rows.get(rg).copied().unwrap_or(0),
                    filter,
                    answers,
                }
            })
            .collect()
    }

    /// The filters read by a [`ProbeJob::whole`] job: per row group the filter and where it
    /// lies, or why there is none.
    pub(crate) fn into_spans(self) -> Vec<Result<FilterSpan, NoFilter>> {
        self.plans
            .iter()
            .map(|p| match p {
                Plan::Done(why) => Err(why.clone()),
                Plan::Ready { offset, layout, .. } => self
                    .fetched
                    .get(offset + layout.header_len, layout.num_bytes)
                    .map(|bitset| FilterSpan {
                        offset: *offset,
                        header_len: layout.header_len,
                        bitset,
                        sealed_overhead: 0,
                    })
                    .map_err(|e| NoFilter::Invalid(format!("cannot read the filter: {e}"))),
                #[cfg(feature = "encryption")]
                Plan::Opened(o) => Ok(FilterSpan {
                    offset: o.offset,
                    header_len: o.header_total,
                    bitset: o.bitset.clone(),
                    sealed_overhead: SEALED_BITSET_OVERHEAD,
                }),
                _ => Err(NoFilter::Invalid("the filter header was never read".into())),
            })
            .collect()
    }
}

impl ProbeJob {
    /// The answers given the filter state; for a present filter, `hits` holds one probe
    /// result per hash (in [`candidate_hashes`] order).
    fn answers(&self, state: &FilterState, hits: &[bool]) -> Vec<Answer> {
        let present = *state == FilterState::Present;
        if let Some(any) = &self.any {
            return any.answer(present, hits).into_iter().collect();
        }
        let mut next = hits.iter();
        self.values
            .iter()
            .map(|v| decide(v, state, |_| !present || *next.next().unwrap_or(&true)))
            .collect()
    }

    /// The answers of a present filter of `blocks` blocks: from the `whole` bitset with the
    /// batch kernel when it was read, else block by block (`block(i)` giving block `i`'s
    /// bytes). A block that cannot be had makes the filter invalid (every answer "unknown").
    fn answer_present(
        &self,
        whole: Option<Bytes>,
        blocks: usize,
        hits: &mut [bool],
        block: impl Fn(u64) -> Result<Bytes, String>,
    ) -> (FilterState, Vec<Answer>) {
        if let (Some(any), Some(bits)) = (&self.any, &whole) {
            // One hit decides a key set's row group: test a chunk at a time and stop at the
            // first (a row group that survives costs a few chunks, not the whole set).
            return match SbbfRef::new(bits) {
                Ok(view) => {
                    let hit = self
                        .hashes
                        .chunks(KEY_CHUNK)
                        .zip(hits.chunks_mut(KEY_CHUNK))
                        .any(|(hs, out)| {
                            view.contains_hashes(hs, out);
                            out.iter().any(|h| *h)
                        });
                    let answers = any.answer(true, &[hit]).into_iter().collect();
                    (FilterState::Present, answers)
                }
                Err(e) => {
                    let state = FilterState::Invalid(format!("cannot read the filter: {e}"));
                    let answers = self.answers(&state, &[]);
                    (state, answers)
                }
            };
        }
        let result = match whole {
            Some(bits) => SbbfRef::new(&bits)
                .map(|view| view.contains_hashes(&self.hashes, hits))
                .map_err(|e| e.to_string()),
            None => self
                .hashes
                .iter()
                .zip(hits.iter_mut())
                .try_for_each(|(h, hit)| {
                    let i = sbbf::block_index(*h, blocks) as u64;
                    let b = block(i)?;
                    *hit = SbbfRef::new(&b)
                        .map_err(|e| e.to_string())?
                        .contains_hash(*h);
                    Ok(())
                }),
        };
        match result {
            Ok(()) => (
                FilterState::Present,
                self.answers(&FilterState::Present, hits),
            ),
            Err(e) => {
                let state = FilterState::Invalid(format!("cannot read the filter: {e}"));
                let answers = self.answers(&state, &[]);
                (state, answers)
            }
        }
    }
}

/// Hashes of a key set tested between checks for a hit: big enough for the batch kernel's
/// prefetching to pay, small next to a join's key set.
const KEY_CHUNK: usize = 512;

/// A set of values reduced to what a pruning leaf needs: how many there are, whether one of
/// them always answers "maybe" (NaN under SQL equality), and whether one has candidate bytes
/// (hashed, in the job's hashes). "Never stored" values add nothing: they are absent anywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AnyOf {
    values: usize,
    always_maybe: bool,
    candidates: bool,
}

impl AnyOf {
    /// Hashes every candidate of `values` (each once, streaming: the encoded values are not
    /// kept) and summarises them.
    pub(crate) fn encode(values: impl Iterator<Item = Encoded>) -> (Vec<u64>, AnyOf) {
        let mut hashes = Vec::with_capacity(values.size_hint().0);
        let mut any = AnyOf::default();
        for v in values {
            any.values += 1;
            match v {
                Encoded::Candidates(c) => {
                    any.candidates |= !c.is_empty();
                    hashes.extend(c.iter().map(|b| sbbf::hash(b)));
                }
                Encoded::NeverStored(_) => {}
                Encoded::AlwaysMaybe(_) => any.always_maybe = true,
            }
        }
        // Only whether some hash hits matters, not which: sorted, the hashes visit the blocks
        // of a filter of any size in ascending order (a block is the hash's top 32 bits scaled
        // to the block count), so a big key set streams through the bitset instead of
        // jumping around it; duplicates are probed once.
        hashes.sort_unstable();
        hashes.dedup();
        (hashes, any)
    }

    /// The one answer for a row group (none for no value): with a present filter "maybe" when
    /// any hash hits or a value is always "maybe", else "absent"; without one "unknown"
    /// unless every value is never stored. The same outcome as all of [`decide`]'s answers
    /// taken together, as the pruning rules read them.
    fn answer(&self, present: bool, hits: &[bool]) -> Option<Answer> {
        if self.values == 0 {
            return None;
        }
        Some(if present {
            if self.always_maybe || hits.iter().any(|h| *h) {
                Answer::Maybe
            } else {
                Answer::Absent
            }
        } else if self.always_maybe || self.candidates {
            Answer::Unknown
        } else {
            Answer::Absent
        })
    }
}

/// The filter offset a plan is about to read from (none when it is done).
/// Whether an encrypted filter has been opened (always false without encryption).
fn is_opened(_p: &Plan) -> bool {
    #[cfg(feature = "encryption")]
    if matches!(_p, Plan::Opened(_)) {
        return true;
    }
    false
}

#[cfg_attr(not(feature = "encryption"), allow(dead_code))]
fn plan_offset(plan: &Plan) -> Option<u64> {
    match plan {
        Plan::NeedHeader { offset, .. } | Plan::Ready { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// Rounds of reads a job may ask for: a header guess, the longest header, the bitset, and
/// slack. A job needs at most three; the bound keeps a bug from looping on hostile input (what
/// is still unread then answers "unknown").
pub(crate) const MAX_ROUNDS: usize = 8;

/// The reads every unfinished job of `jobs` needs next, merged into one wave (so the leaves
/// of a predicate over several columns cost the waves of one column, not one chain each), or
/// `None` when all are done.
pub(crate) fn next_reads_all(jobs: &[ProbeJob]) -> Option<Vec<Range>> {
    let mut ranges = Vec::new();
    let mut gap = 0;
    let mut unfinished = false;
    for job in jobs {
        // Planned once per wave: with many values, planning hashes every value per filter.
        if let Some(r) = job.next_reads() {
            unfinished = true;
            ranges.extend(r);
            gap = gap.max(job.policy.max_gap);
        }
    }
    unfinished.then(|| coalesce(ranges, gap))
}

/// Hands one wave's bytes to every job of `jobs` (each takes what it asked for).
pub(crate) fn supply_all(jobs: &mut [ProbeJob], fetched: Fetched) {
    if let Some((last, rest)) = jobs.split_last_mut() {
        for job in rest {
            job.supply(fetched.clone());
        }
        last.supply(fetched);
    }
}

/// The one sync driver: reads what `jobs` ask for from `reader`, a wave at a time, until they
/// have all they need, counting the reads in `io`.
pub(crate) fn run<R: ChunkReader>(reader: &R, io: &IoCounters, jobs: &mut [ProbeJob]) {
    for _ in 0..MAX_ROUNDS {
        let Some(ranges) = next_reads_all(jobs) else {
            return;
        };
        if ranges.is_empty() {
            // A step that needs no bytes (no value has candidate hashes) costs no wave.
            supply_all(jobs, Fetched::default());
            continue;
        }
        io.start();
        let fetched = Fetched::read(reader, &ranges);
        io.wave(ranges.len() as u64, fetched.bytes());
        supply_all(jobs, fetched);
    }
}

fn initial_plan(loc: FilterLocation, footer: u64) -> Plan {
    let Some(offset) = loc.offset else {
        return Plan::Done(NoFilter::Missing);
    };
    let invalid = |s: String| Plan::Done(NoFilter::Invalid(s));
    if offset < 4 || offset as u64 >= footer {
        return invalid(format!(
            "bloom_filter_offset {offset} is outside the data area [4, {footer})"
        ));
    }
    let offset = offset as u64;
    match loc.length {
        None => Plan::NeedHeader {
            offset,
            window: HEADER_GUESS,
        },
        Some(len) if len <= 0 => invalid(format!("bloom_filter_length {len} is not positive")),
        Some(len) if offset + len as u64 > footer => invalid(format!(
            "bloom_filter_length {len} at offset {offset} runs past the data area (footer at {footer})"
        )),
        Some(len) => match BloomFilterHeader::num_bytes_for_total(len as i64) {
            Some(n) => Plan::Ready {
                offset,
                layout: Layout {
                    header_len: BloomFilterHeader::encoded_len(n) as u64,
                    num_bytes: n as u64,
                },
                verified: false,
                fetched: false,
            },
            // No standard header plus a valid size adds up to this length: read the header.
            None => Plan::NeedHeader {
                offset,
                window: MAX_HEADER_BYTES.min(len as usize),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    //! The plan fed with bytes: no file, no reader; each test says what it reads and when.
    use super::*;

    /// `PAR1`, then a filter of `blocks` blocks holding `values` at offset 4, then 100 bytes of
    /// padding (the footer starts after them).
    fn file_with_filter(blocks: usize, values: &[&[u8]]) -> (Vec<u8>, FilterLocation, u64) {
        let mut f = sbbf::Sbbf::with_num_bytes(blocks * 32);
        for v in values {
            f.insert(v);
        }
        let header = BloomFilterHeader {
            num_bytes: (blocks * 32) as i32,
        }
        .to_bytes();
        let mut bytes = b"PAR1".to_vec();
        bytes.extend(&header);
        bytes.extend(f.as_bytes());
        let length = (bytes.len() - 4) as i32;
        bytes.extend(vec![0u8; 100]);
        let footer = bytes.len() as u64;
        let loc = FilterLocation {
            offset: Some(4),
            length: Some(length),
        };
        (bytes, loc, footer)
    }

    fn candidates(v: &[u8]) -> Encoded {
        Encoded::Candidates(vec![v.to_vec()])
    }

    /// Runs the job over `bytes` (reads failing where `fail` says): the reads of each wave.
    fn drive(job: &mut ProbeJob, bytes: &[u8], fail: impl Fn(Range) -> bool) -> Vec<Vec<Range>> {
        let mut waves = Vec::new();
        while let Some(ranges) = job.next_reads() {
            assert!(waves.len() < MAX_ROUNDS, "the plan does not finish");
            let mut fetched = Fetched::default();
            for r in &ranges {
                let got = if fail(*r) {
                    Err("injected failure".to_string())
                } else {
                    bytes
                        .get(r.start as usize..r.end as usize)
                        .map(Bytes::copy_from_slice)
                        .ok_or_else(|| "past the end".to_string())
                };
                fetched.push(*r, got);
            }
            job.supply(fetched);
            waves.push(ranges);
        }
        waves
    }

    fn present() -> Vec<&'static [u8]> {
        vec![b"alpha", b"beta", b"gamma"]
    }

    /// A value whose block in a `blocks`-block filter holding `present()` rejects it.
    fn absent_value(blocks: usize) -> Vec<u8> {
        let mut f = sbbf::Sbbf::with_num_bytes(blocks * 32);
        for v in present() {
            f.insert(v);
        }
        (0u32..)
            .map(|i| format!("absent-{i}").into_bytes())
            .find(|v| !f.contains(v))
            .unwrap()
    }

    #[test]
    fn with_its_length_a_filter_costs_one_wave_of_the_blocks_asked_for() {
        let (bytes, loc, footer) = file_with_filter(64, &present());
        let absent = absent_value(64);
        let values = vec![candidates(b"beta"), candidates(&absent)];
        // Requests cost next to nothing here: the blocks are read alone, not the bitset.
        let cheap = IoPolicy {
            request_cost: 1,
            max_gap: 0,
        };
        let mut job = ProbeJob::new(&[loc], vec![10], footer, values, cheap);
        let waves = drive(&mut job, &bytes, |_| false);
        assert_eq!(waves.len(), 1, "{waves:?}");
        let read: u64 = waves[0].iter().map(|r| r.end - r.start).sum();
        // The header plus two blocks, never the 2 KiB bitset.
        assert!(read <= 20 + 2 * 32, "read {read} bytes: {waves:?}");
        let answers = job.finish();
        assert_eq!(answers[0].filter, FilterState::Present);
        assert_eq!(answers[0].answers, vec![Answer::Maybe, Answer::Absent]);
    }

    #[test]
    fn without_a_length_the_header_is_read_first() {
        let (bytes, mut loc, footer) = file_with_filter(64, &present());
        loc.length = None;
        let absent = absent_value(64);
        let values = vec![candidates(b"gamma"), candidates(&absent)];
        let mut job = ProbeJob::new(&[loc], vec![10], footer, values, IoPolicy::default());
        let waves = drive(&mut job, &bytes, |_| false);
        assert_eq!(waves.len(), 2, "{waves:?}");
        assert_eq!(
            waves[0],
            vec![Range {
                start: 4,
                end: 4 + HEADER_GUESS as u64
            }]
        );
        assert_eq!(job.finish()[0].answers, vec![Answer::Maybe, Answer::Absent]);
    }

    #[test]
    fn a_length_that_disagrees_with_the_header_makes_the_filter_unusable() {
        // The length claims a bigger filter than the header announces: the guessed layout
        // is checked against the header and the filter answers "unknown", never "absent".
        let (bytes, mut loc, footer) = file_with_filter(2, &present());
        loc.length = Some(loc.length.unwrap() + 32);
        let absent = absent_value(2);
        let mut job = ProbeJob::new(
            &[loc],
            vec![10],
            footer,
            vec![candidates(&absent)],
            IoPolicy::default(),
        );
        drive(&mut job, &bytes, |_| false);
        let a = job.finish();
        assert!(matches!(a[0].filter, FilterState::Invalid(_)), "{a:?}");
        assert_eq!(a[0].answers, vec![Answer::Unknown]);
    }

    #[test]
    fn a_failed_read_answers_unknown_never_absent() {
        let (bytes, loc, footer) = file_with_filter(64, &present());
        let absent = absent_value(64);
        let mut job = ProbeJob::new(
            &[loc],
            vec![10],
            footer,
            vec![candidates(&absent)],
            IoPolicy::default(),
        );
        drive(&mut job, &bytes, |_| true);
        let a = job.finish();
        assert!(matches!(a[0].filter, FilterState::Invalid(_)), "{a:?}");
        assert_eq!(a[0].answers, vec![Answer::Unknown]);
    }

    #[test]
    fn locations_outside_the_data_area_read_nothing() {
        let (bytes, mut loc, footer) = file_with_filter(2, &present());
        let mut past = loc;
        past.offset = Some(footer as i64);
        loc.length = Some(footer as i32); // runs past the footer
        let missing = FilterLocation {
            offset: None,
            length: None,
        };
        let mut job = ProbeJob::new(
            &[past, loc, missing],
            vec![1, 1, 1],
            footer,
            vec![candidates(b"alpha")],
            IoPolicy::default(),
        );
        assert!(drive(&mut job, &bytes, |_| false).is_empty());
        let a = job.finish();
        assert!(matches!(a[0].filter, FilterState::Invalid(_)));
        assert!(matches!(a[1].filter, FilterState::Invalid(_)));
        assert_eq!(a[2].filter, FilterState::Missing);
        assert!(a.iter().all(|rg| rg.answers == vec![Answer::Unknown]));
    }

    #[test]
    fn a_whole_read_keeps_the_bitset_as_stored() {
        let (bytes, loc, footer) = file_with_filter(4, &present());
        let mut job = ProbeJob::whole(&[loc], vec![1], footer, IoPolicy::default());
        drive(&mut job, &bytes, |_| false);
        let spans = job.into_spans();
        let span = spans[0].as_ref().unwrap();
        let header_len = span.header_len as usize;
        assert_eq!(span.offset, 4);
        assert_eq!(
            &span.bitset[..],
            &bytes[4 + header_len..4 + header_len + 128]
        );
        assert_eq!(span.end(), 4 + header_len as u64 + 128);
    }

    #[test]
    fn a_key_set_finds_its_one_present_key_wherever_it_sorts() {
        // Thousands of absent keys and one present: whichever chunk the present key's hash
        // sorts into, the row group is "maybe"; without it, "absent". Read whole (the cost
        // rule's choice for a big set) and block by block.
        let (bytes, loc, footer) = file_with_filter(64, &present());
        let absent: Vec<Vec<u8>> = (0u32..)
            .map(|i| format!("absent-{i}").into_bytes())
            .filter(|v| {
                let mut f = sbbf::Sbbf::with_num_bytes(64 * 32);
                for p in present() {
                    f.insert(p);
                }
                !f.contains(v)
            })
            .take(3 * KEY_CHUNK)
            .collect();
        for with_present in [false, true] {
            for policy in [
                IoPolicy::default(),
                IoPolicy {
                    request_cost: 1,
                    max_gap: 0,
                },
            ] {
                let mut keys: Vec<Encoded> = absent.iter().map(|v| candidates(v)).collect();
                if with_present {
                    keys.push(candidates(b"gamma"));
                }
                let (hashes, any) = AnyOf::encode(keys.into_iter());
                let mut job =
                    ProbeJob::any_of(&[loc], vec![10], footer, hashes.into(), any, policy);
                drive(&mut job, &bytes, |_| false);
                let want = if with_present {
                    Answer::Maybe
                } else {
                    Answer::Absent
                };
                assert_eq!(
                    job.finish()[0].answers,
                    vec![want],
                    "{with_present} {policy:?}"
                );
            }
        }
    }

    /// Sealed modules: an encrypted filter is a header module and a bitset module, each read
    /// and authenticated whole; anything that does not open answers "unknown", never "absent".
    #[cfg(feature = "encryption")]
    mod sealed {
        use super::*;
        use crate::crypto::{module, seal_module, FilterCrypto, ModuleKey};
        use crate::keys::Key;

        fn key() -> ModuleKey {
            ModuleKey::for_chunk(Key::parse("0123456789012345").unwrap(), b"file-aad", 0, 3)
        }

        /// `PAR1`, then the two modules of a `blocks`-block filter holding `present()` at
        /// offset 4, then 100 bytes of padding: the bytes, the location, the footer start.
        fn sealed_file(blocks: usize, key: &ModuleKey) -> (Vec<u8>, FilterLocation, u64) {
            let mut f = sbbf::Sbbf::with_num_bytes(blocks * 32);
            for v in present() {
                f.insert(v);
            }
            let header = BloomFilterHeader {
                num_bytes: (blocks * 32) as i32,
            }
            .to_bytes();
            let k = Key::parse("0123456789012345").unwrap();
            let mut bytes = b"PAR1".to_vec();
            bytes.extend(seal_module(
                &k,
                &header,
                &key.aad(module::BLOOM_FILTER_HEADER),
            ));
            bytes.extend(seal_module(
                &k,
                f.as_bytes(),
                &key.aad(module::BLOOM_FILTER_BITSET),
            ));
            let length = (bytes.len() - 4) as i32;
            bytes.extend(vec![0u8; 100]);
            let footer = bytes.len() as u64;
            let loc = FilterLocation {
                offset: Some(4),
                length: Some(length),
            };
            (bytes, loc, footer)
        }

        fn job(loc: FilterLocation, footer: u64, key: ModuleKey, values: Vec<Encoded>) -> ProbeJob {
            ProbeJob::new(&[loc], vec![10], footer, values, IoPolicy::default())
                .with_crypto(vec![FilterCrypto::Sealed(key)])
        }

        #[test]
        fn with_its_length_both_modules_come_in_one_read() {
            let (bytes, loc, footer) = sealed_file(16, &key());
            let absent = absent_value(16);
            let values = vec![candidates(b"alpha"), candidates(&absent)];
            let mut job = job(loc, footer, key(), values);
            let waves = drive(&mut job, &bytes, |_| false);
            assert_eq!(waves.len(), 1, "{waves:?}");
            // The whole filter, modules and all, in one range: GCM authenticates whole modules.
            let len = loc.length.unwrap() as u64;
            assert_eq!(
                waves[0],
                vec![Range {
                    start: 4,
                    end: 4 + len
                }]
            );
            let a = job.finish();
            assert_eq!(a[0].filter, FilterState::Present);
            assert_eq!(a[0].answers, vec![Answer::Maybe, Answer::Absent]);
        }

        #[test]
        fn without_a_length_the_header_module_is_read_first() {
            // 8 KiB: more than the window a header module may take, so two waves.
            let (bytes, mut loc, footer) = sealed_file(256, &key());
            let whole = loc.length.unwrap() as u64;
            loc.length = None;
            let absent = absent_value(256);
            let mut job = job(loc, footer, key(), vec![candidates(&absent)]);
            let waves = drive(&mut job, &bytes, |_| false);
            assert_eq!(waves.len(), 2, "{waves:?}");
            assert_eq!(waves[0][0].start, 4);
            assert!(waves[0][0].end < 4 + whole, "{waves:?}");
            assert_eq!(waves[1].last().unwrap().end, 4 + whole, "{waves:?}");
            assert_eq!(job.finish()[0].answers, vec![Answer::Absent]);
        }

        #[test]
        fn a_wrong_key_or_another_chunks_modules_answer_unknown() {
            let (bytes, loc, footer) = sealed_file(16, &key());
            let absent = absent_value(16);
            let wrong_key =
                ModuleKey::for_chunk(Key::parse("5432109876543210").unwrap(), b"file-aad", 0, 3);
            // The right key, but the modules of column 3 read as column 4's: the AAD differs.
            let other_chunk =
                ModuleKey::for_chunk(Key::parse("0123456789012345").unwrap(), b"file-aad", 0, 4);
            for k in [wrong_key, other_chunk] {
                let mut job = job(loc, footer, k, vec![candidates(&absent)]);
                drive(&mut job, &bytes, |_| false);
                let a = job.finish();
                assert!(matches!(a[0].filter, FilterState::Invalid(_)), "{a:?}");
                assert_eq!(a[0].answers, vec![Answer::Unknown]);
            }
        }

        #[test]
        fn altered_truncated_or_plaintext_bytes_answer_unknown() {
            let (bytes, loc, footer) = sealed_file(16, &key());
            let absent = absent_value(16);
            let len = loc.length.unwrap() as usize;
            let mut cases: Vec<(String, Vec<u8>, FilterLocation)> = Vec::new();
            // One bit flipped in the header module, in the bitset module's tag, and in a
            // length prefix.
            for at in [4 + 20, 4 + len - 1, 4 + 1] {
                let mut b = bytes.clone();
                b[at] ^= 0x10;
                cases.push((format!("bit flipped at {at}"), b, loc));
            }
            // A length that cuts the bitset module short.
            let mut short = loc;
            short.length = Some(loc.length.unwrap() - 8);
            cases.push(("short length".into(), bytes.clone(), short));
            // A plaintext filter where a sealed one belongs (a leak, and not authenticated).
            let (plain, plain_loc, plain_footer) = file_with_filter(16, &present());
            assert_eq!(plain_footer as usize, plain.len());
            cases.push(("plaintext filter".into(), plain, plain_loc));
            for (what, b, l) in cases {
                let footer = if what == "plaintext filter" {
                    b.len() as u64
                } else {
                    footer
                };
                let mut job = job(l, footer, key(), vec![candidates(&absent)]);
                drive(&mut job, &b, |_| false);
                let a = job.finish();
                assert_eq!(a[0].answers, vec![Answer::Unknown], "{what}: {a:?}");
            }
            // A failed read of either module: unknown too.
            let mut job = job(loc, footer, key(), vec![candidates(&absent)]);
            drive(&mut job, &bytes, |_| true);
            assert_eq!(job.finish()[0].answers, vec![Answer::Unknown]);
        }

        #[test]
        fn an_unreadable_chunk_answers_unknown_without_a_read() {
            let (bytes, loc, footer) = sealed_file(16, &key());
            let mut job = ProbeJob::new(
                &[loc],
                vec![10],
                footer,
                vec![candidates(b"x")],
                IoPolicy::default(),
            )
            .with_crypto(vec![FilterCrypto::Unreadable("no key for column c".into())]);
            let waves = drive(&mut job, &bytes, |_| false);
            assert!(waves.is_empty(), "{waves:?}");
            let a = job.finish();
            assert_eq!(a[0].answers, vec![Answer::Unknown]);
            assert!(
                matches!(&a[0].filter, FilterState::Invalid(why) if why.contains("no key")),
                "{a:?}"
            );
        }
    }
}
