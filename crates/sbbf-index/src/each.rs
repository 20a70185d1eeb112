//! A table, file by file: the loop every front end runs to probe or prune the files a path
//! names, written once. With a usable index at a table root, the files the index answers are
//! reported from it without being read, and the others are read directly, all in listing
//! order; without one (or with `use_index` false) every file is read directly.
//!
//! Where a table's files come from is decided here and nowhere else: a front end gives a
//! path and gets files back, so a new way to know a table's files changes this module only.
//! What the results add up to (the counts, the exit status, "no file has the column") is
//! [`sbbf_parquet::report::each::ProbeTally`]'s to say.

use crate::follow::{self, Followed};
use crate::probe::{plan_loaded, ruled_out, IndexStats, Planned, ProbePlan, Ruled};
use crate::table::Root;
use crate::Error;
use futures::{FutureExt as _, StreamExt as _};
use sbbf_lake as lake;
use sbbf_lake::{TableOptions, TableVersion};
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::prune::{Dnf, PreparedPredicate};
use sbbf_parquet::source::object::FileProbe;
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::{Encoded, IoStats};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

/// One file's probe, as [`ProbeEach::run`] hands it over.
#[derive(Debug)]
pub struct Probed {
    /// The file as results name it: a local path as displayed, or an object's URL.
    pub file: String,
    /// Its answers (from the index: no reads, `io` zero), or why there are none. A file the
    /// index knows has no such column is [`sbbf_parquet::Error::UnknownColumn`], as a direct
    /// probe of a table says it.
    pub result: Result<FileProbe, sbbf_parquet::Error>,
    /// Whether the index answered for the file (it was not read).
    pub from_index: bool,
}

/// What a [`ProbeEach`] run read beside the files' own answers.
#[derive(Debug, Clone, Default)]
pub struct ProbeSummary {
    /// The index's figures, when the path is a table root and its index was consulted.
    pub index: Option<IndexStats>,
    /// The reads of the files read directly: requests and bytes summed, waves the most of any
    /// one file (they are read side by side).
    pub direct: IoStats,
    /// The table version read, when the path is a Delta or Iceberg table read as its
    /// snapshot.
    pub table: Option<TableVersion>,
}

/// A probe of `column` over the files a path names, opened (listed, the index consulted)
/// and ready to run.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_index::Error> {
/// use sbbf_index::each::ProbeEach;
/// use sbbf_parquet::report::each::ProbeTally;
/// use sbbf_parquet::values::text::encode_text;
/// use sbbf_parquet::format::column::ColumnType;
/// let encode = |ty: &ColumnType| Ok(vec![encode_text(ty, "42", Default::default())?]);
/// let probe = ProbeEach::open("events/", "user_id", encode, Default::default(), true).await?;
/// let mut tally = ProbeTally::new("user_id", 1, probe.is_many());
/// probe
///     .run(|p| {
///         match &p.result {
///             Ok(f) => tally.add_answers(&f.answers, f.io),
///             Err(e) => tally.add_error(e),
///         };
///     })
///     .await?;
/// println!("exit status {}", tally.exit_status());
/// # Ok(()) }
/// ```
pub struct ProbeEach<F> {
    column: String,
    encode: F,
    many: bool,
    /// Every listed file's fate, when the index was consulted; else every file is direct.
    planned: Option<Vec<Planned>>,
    /// The files to read directly, in order.
    source: Source,
    index: Option<IndexStats>,
    warning: Option<String>,
    table: Option<TableVersion>,
    log_note: Option<String>,
    /// A Delta table's partition column, answered from the log's values (its files do not
    /// hold it): every file is read for its footer only.
    partition: Option<Arc<lake::PartitionColumn>>,
    /// Why a file without the column may still hold its values (an Iceberg identity
    /// partition's source column, a default): such a file answers "unknown", not "no such
    /// column" (see `Source::probe_lacking`).
    lacking: Option<String>,
    /// How the table's files name its columns, to name them back in errors (a file's near
    /// misses under Delta column mapping are physical paths).
    names: Option<lake::TableNames>,
}

impl<F> ProbeEach<F>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error> + Clone + Send + Sync + 'static,
{
    /// Lists the files `at` names (a file, a directory, a glob, an object-store URL or
    /// prefix, a Delta or Iceberg table, a catalog's table: [`lake::Table::locate`]) and, at
    /// a table root with `use_index`, reads its index at once; `encode` gives
    /// the values' bytes for each column type (as [`Source::probe`] takes it). An index that
    /// cannot be used is ignored (see [`ProbeEach::warning`]); a listing that fails is this
    /// call's error.
    pub async fn open(
        at: impl Into<lake::TableRef>,
        column: &str,
        encode: F,
        options: TableOptions,
        use_index: bool,
    ) -> Result<ProbeEach<F>, sbbf_parquet::Error> {
        let TableOptions {
            source: options,
            lake: lake_options,
        } = options;
        let at = at.into();
        // A table is found once, here, and its snapshot read at most once: its files are the
        // listing, and its schema says how files name the column. The index's head is read
        // beside finding the table (one round trip for both, where the index's read would
        // otherwise wait for the log's; a catalog's table is known only once the catalog
        // answers); a Delta table whose index knows an earlier version is then read as the
        // commits since, not as its snapshot (see `crate::follow`).
        let root_of = |location: &str| match use_index {
            true => Root::open_table(location).ok().flatten(),
            false => None,
        };
        let early = match &at {
            lake::TableRef::Path(p) => root_of(&sbbf_parquet::source::object::local_location(p)?),
            lake::TableRef::Catalog { .. } => None,
        };
        let load = |root: Option<Root>| async move {
            let loaded = match &root {
                Some(r) => Some(r.load().await),
                None => None,
            };
            (root, loaded)
        };
        let (table, (root, preloaded)) =
            futures::future::join(lake::Table::locate(at, &lake_options), load(early)).await;
        let table = table?;
        let (root, preloaded) = match (&root, table.at()) {
            (None, lake::TableRef::Catalog { .. }) => load(root_of(table.location())).await,
            _ => (root, preloaded),
        };
        let path = table.location().to_string();
        let path = path.as_str();
        let mut log_note = None;
        if let (Some(found), Some(root), Some(Ok(Some((loaded, reads))))) =
            (table.found(), &root, &preloaded)
        {
            let root = root.clone().with_lake(lake_options.clone());
            match follow::plan(
                found,
                path,
                &root,
                (loaded, *reads),
                column,
                encode.clone(),
                options.clone(),
            )
            .await
            {
                Followed::Plan(p, column) => return Ok(Self::planned(*p, column, encode, None)),
                Followed::Snapshot(why) => log_note = Some(why),
            }
        }
        let snap = table.read().await?.snapshot().cloned();
        let partitioned = |s: &lake::Snapshot| {
            s.format == lake::Format::Delta && s.partition_columns.iter().any(|c| c == column)
        };
        if let Some(s) = snap.as_ref().filter(|s| partitioned(s)) {
            let source = lake::source_of(s, options.clone())?;
            if let Some(p) = lake::PartitionColumn::of(s, column, source.names()) {
                let source = source.sorted_by_name();
                // The index holds no filter of it, and its files no value: the log answers.
                let mut probe = Self::direct(column.to_string(), encode, source, snap.as_deref());
                probe.log_note = log_note;
                probe.partition = Some(Arc::new(p));
                return Ok(probe);
            }
        }
        // A file's lack of such a column proves nothing: the index (which would rule the file
        // out for it) is not asked, and each file answers for itself.
        let lacking = snap
            .as_ref()
            .and_then(|s| s.names().lacking_holds_values(column));
        let column = match &snap {
            Some(s) => s.file_column(column)?,
            None => column.to_string(),
        };
        let root = root.filter(|_| lacking.is_none()).map(|r| {
            r.with_lake(lake_options.clone())
                .with_snapshot(snap.clone())
        });
        if let Some(root) = root {
            // Listing errors are the direct listing's to report, in its words.
            let planned =
                plan_loaded(&root, preloaded, &column, encode.clone(), options.clone()).await;
            if let Ok(p) = planned {
                let mut probe = Self::planned(p, column, encode, log_note);
                probe.names = snap.as_deref().map(lake::Snapshot::names);
                return Ok(probe);
            }
        }
        let source = match &snap {
            // In the order of their names, as the index's plan gives a table's files.
            Some(s) => lake::source_of(s, options)?.sorted_by_name(),
            None => Source::open(path, options).await?,
        };
        let mut probe = Self::direct(column, encode, source, snap.as_deref());
        probe.lacking = lacking;
        Ok(probe)
    }

    /// A probe of every file of `source` read directly (of the table `snap`, when one).
    fn direct(column: String, encode: F, source: Source, snap: Option<&lake::Snapshot>) -> Self {
        ProbeEach {
            column,
            encode,
            many: source.is_many(),
            planned: None,
            source,
            index: None,
            warning: None,
            table: snap.map(lake::Snapshot::table_version),
            log_note: None,
            partition: None,
            lacking: None,
            names: snap.map(lake::Snapshot::names),
        }
    }

    /// A probe the index planned.
    fn planned(p: ProbePlan, column: String, encode: F, log_note: Option<String>) -> Self {
        ProbeEach {
            column,
            encode,
            many: p.many,
            planned: Some(p.files),
            source: p.source,
            index: Some(p.stats),
            warning: p.warning,
            table: p.table,
            log_note,
            partition: None,
            lacking: None,
            names: None,
        }
    }

    /// Whether the path names several files (a directory, a glob, a prefix): then a file
    /// without the column is a result of its own.
    pub fn is_many(&self) -> bool {
        self.many
    }

    /// The table version read, when the path is a Delta or Iceberg table read as its
    /// snapshot.
    pub fn table(&self) -> Option<&TableVersion> {
        self.table.as_ref()
    }

    /// The number of files the run will hand over.
    pub fn len(&self) -> usize {
        self.planned.as_ref().map_or(self.source.len(), Vec::len)
    }

    /// Whether there is no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Why a Delta table's version was read as its snapshot, not as the commits since the
    /// version its index was built from, when the index records one it might have followed.
    pub fn log_note(&self) -> Option<&str> {
        self.log_note.as_deref()
    }

    /// Why the table's index was ignored, when it exists but cannot be used: say it once.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Probes the files, handing each one's result to `each` in listing order. An error means
    /// the run could not go on (a file the plan promised was not probed); files that fail are
    /// results, not errors.
    pub async fn run(self, mut each: impl FnMut(Probed)) -> Result<ProbeSummary, Error> {
        let mut direct_io = IoStats::default();
        let mut note = |r: &Result<FileProbe, sbbf_parquet::Error>| {
            if let Ok(p) = r {
                direct_io.requests += p.io.requests;
                direct_io.bytes += p.io.bytes;
                direct_io.waves = direct_io.waves.max(p.io.waves);
            }
        };
        if let Some(part) = self.partition {
            let mut footers = self
                .source
                .run(|pq| async move { Ok((Arc::clone(pq.metadata()), pq.io_stats())) }.boxed());
            let ty = part.probe_type();
            while let Some((file, read)) = footers.next().await {
                let result = read.and_then(|(metadata, io)| {
                    let encoded: Arc<[sbbf_parquet::Encoded]> = (self.encode)(&ty)?.into();
                    Ok(part.answer(&file, &metadata, io, encoded))
                });
                note(&result);
                each(Probed {
                    file,
                    result,
                    from_index: false,
                });
            }
            return Ok(ProbeSummary {
                index: None,
                direct: direct_io,
                table: self.table,
            });
        }
        let names = self.names;
        let mut direct = self
            .source
            .probe_lacking(&self.column, self.encode, self.lacking)
            .map(move |(file, r)| (file, r.map_err(|e| by_table_names(e, names.as_ref()))));
        match self.planned {
            None => {
                while let Some((file, result)) = direct.next().await {
                    note(&result);
                    each(Probed {
                        file,
                        result,
                        from_index: false,
                    });
                }
            }
            Some(planned) => {
                for f in planned {
                    match f {
                        Planned::Index { name, answer } => {
                            let result = match answer {
                                Ruled::Absent(a) | Ruled::Answered(a) => Ok(FileProbe {
                                    column: a.column,
                                    encoded: a.encoded,
                                    answers: a.answers,
                                    io: IoStats::default(),
                                    other_readings: Vec::new(),
                                }),
                                Ruled::NoColumn => Err(sbbf_parquet::Error::UnknownColumn {
                                    column: self.column.clone(),
                                    candidates: Vec::new(),
                                }),
                            };
                            each(Probed {
                                file: name,
                                result,
                                from_index: true,
                            });
                        }
                        Planned::Direct { name, .. } => {
                            let Some((file, result)) = direct.next().await else {
                                return Err(Error::NotProbed(name));
                            };
                            note(&result);
                            each(Probed {
                                file,
                                result,
                                from_index: false,
                            });
                        }
                    }
                }
            }
        }
        Ok(ProbeSummary {
            index: self.index,
            direct: direct_io,
            table: self.table,
        })
    }
}

/// `e` with the columns it names (a file's near misses) named as the table names them, where
/// `names` (the table's) says its files name them otherwise.
fn by_table_names(e: sbbf_parquet::Error, names: Option<&lake::TableNames>) -> sbbf_parquet::Error {
    let Some(names) = names else {
        return e;
    };
    let name = |c: String| names.table_column(&c).unwrap_or(c);
    match e {
        sbbf_parquet::Error::UnknownColumn { column, candidates } => {
            sbbf_parquet::Error::UnknownColumn {
                column: name(column),
                candidates: candidates.into_iter().map(name).collect(),
            }
        }
        e => e,
    }
}

/// What [`prune_each`] found beside the files' row groups.
#[derive(Debug, Clone, Default)]
pub struct PruneSummary {
    /// Why the table's index was ignored, when it exists but cannot be used.
    pub warning: Option<String>,
}

/// The row groups of every file `at` names that may hold rows satisfying `filters`, handed
/// to `each` in listing order (`Break` stops the run). A file lacking a column a test names
/// keeps the row groups that test would decide (schema evolution, a partition column); with
/// `strict`, a column that no file has and that is no hive partition key of any file
/// (`.../year=2024/...`) is [`sbbf_parquet::Error::NoFileHasColumn`]. At a table root with
/// `use_index`, the files the index proves hold no matching row are handed over unread with
/// no row groups.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// use sbbf_index::each::prune_each;
/// use sbbf_parquet::prune::{Dnf, Leaf, Test};
/// use sbbf_parquet::Literal;
/// let filters = Dnf(vec![vec![Leaf { column: Some("id".into()), test: Test::Eq(Literal::Int(7)) }]]);
/// prune_each("events/", filters, Default::default(), true, true, |file, rgs| {
///     println!("{file}: {rgs:?}");
///     std::ops::ControlFlow::Continue(())
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub async fn prune_each(
    at: impl Into<lake::TableRef>,
    filters: Dnf,
    options: TableOptions,
    use_index: bool,
    strict: bool,
    each: impl FnMut(String, Result<Vec<usize>, sbbf_parquet::Error>) -> ControlFlow<()>,
) -> Result<PruneSummary, sbbf_parquet::Error> {
    let TableOptions {
        source: options,
        lake: lake_options,
    } = options;
    // A table's snapshot is read once: its files, and how they name the filters' columns.
    let table = open_table(at, &lake_options, use_index).await?;
    prune_table(&table, filters, options, use_index, strict, each).await
}

/// A table opened with its index's head read beside it ([`open_table`]).
#[derive(Debug)]
pub struct OpenedTable {
    /// The table, its snapshot read.
    pub table: lake::Table,
    /// The index's head at its folder (and where that index is), when there is one and it
    /// was asked for.
    head: Option<(String, crate::table::Loaded)>,
}

/// Opens the table `at` names, its snapshot read ([`lake::Table::open`]); with `use_index`
/// the index at its folder is read in the same round trip, and an Iceberg table on a store
/// whose current snapshot the index was built from is read from the index's file table
/// instead of its manifests ([`crate::table::Loaded::known_snapshot`]). The head is kept
/// for [`prune_table`], which then asks the store only for the index's stripes. A table
/// named through a catalog is opened as [`lake::Table::open`] opens it.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// let opened = sbbf_index::each::open_table("s3://bucket/events/", &Default::default(), true).await?;
/// println!("{:?}", opened.table.format());
/// # Ok(()) }
/// ```
pub async fn open_table(
    at: impl Into<lake::TableRef>,
    lake_options: &lake::LakeOptions,
    use_index: bool,
) -> Result<OpenedTable, sbbf_parquet::Error> {
    let at = at.into();
    let root = match (&at, use_index) {
        (lake::TableRef::Path(p), true) => sbbf_parquet::source::object::local_location(p)
            .ok()
            .and_then(|p| Root::open_table(&p).ok().flatten()),
        _ => None,
    };
    let index_at = root.as_ref().map(Root::index_location);
    let (load, known) = crate::table::load_for_reader(root);
    let (table, head) =
        futures::future::join(lake::Table::open_known(None, at, lake_options, known), load).await;
    let head = head.and_then(|h| h.ok().flatten()).map(|(h, _)| h);
    Ok(OpenedTable {
        table: table?,
        head: index_at.zip(head),
    })
}

/// [`prune_each`] of a table a front end has opened already ([`open_table`]): its
/// snapshot (or its files) as read then, not found and read again.
pub async fn prune_table(
    opened: &OpenedTable,
    filters: Dnf,
    options: SourceOptions,
    use_index: bool,
    strict: bool,
    mut each: impl FnMut(String, Result<Vec<usize>, sbbf_parquet::Error>) -> ControlFlow<()>,
) -> Result<PruneSummary, sbbf_parquet::Error> {
    let table = &opened.table;
    let lake_options = table.lake().clone();
    let path = table.location();
    let snap = table.snapshot().cloned();
    let mut filters = filters;
    // The index is asked by the names it knows a table's columns by, and not of a column
    // whose absence from a file proves nothing (a leaf left true: see
    // `Snapshot::index_column`).
    let mut index_filters = filters.clone();
    if let Some(s) = &snap {
        for leaf in index_filters.0.iter_mut().flatten() {
            leaf.column = leaf.column.as_deref().and_then(|c| s.index_column(c));
        }
        for leaf in filters.0.iter_mut().flatten() {
            if let Some(c) = &leaf.column {
                leaf.column = Some(s.file_column(c)?);
            }
        }
    }
    let filters = Arc::new(filters);
    let (by_index, warning) = match use_index {
        true => {
            let options = options.clone();
            let head = opened.head.clone();
            index_rules_out(
                path,
                &index_filters,
                options,
                (&lake_options, head),
                snap.clone(),
            )
            .await
        }
        false => (None, None),
    };
    // With the index: every listed file in order with whether it is left out, and a source of
    // the others.
    let (order, source) = match by_index {
        Some((order, source)) => (Some(order), source),
        None => match &snap {
            Some(s) => (None, lake::source_of(s, options)?),
            None => (None, Source::open(path, options).await?),
        },
    };
    let policy = source.policy();
    // Files that lack the same filter columns get the same predicate, prepared once: its key
    // sets are hashed once for all of them, and the literals neither copied nor compared per
    // file (a list of 100,000 values over 1,000 files: once).
    type Prepared = (Vec<String>, Option<Arc<PreparedPredicate>>);
    let prepared: Arc<Mutex<Vec<Prepared>>> = Default::default();
    let work_filters = Arc::clone(&filters);
    let mut results = source.run(move |mut pq| {
        let filters = Arc::clone(&work_filters);
        let prepared = Arc::clone(&prepared);
        async move {
            // As `predicate_for` finds them: every test naming a column this file lacks.
            let missing: Vec<(String, sbbf_parquet::Error)> = filters
                .columns()
                .filter_map(|c| pq.column_index(c).err().map(|e| (c.to_string(), e)))
                .collect();
            let key: Vec<String> = missing.iter().map(|(c, _)| c.clone()).collect();
            let p = {
                let mut seen = prepared.lock().unwrap_or_else(|e| e.into_inner());
                match seen.iter().find(|(k, _)| *k == key) {
                    Some((_, q)) => q.clone(),
                    None => {
                        let q = filters
                            .predicate_for(|c| pq.column_index(c), &mut Vec::new())
                            .map(|p| Arc::new(PreparedPredicate::new(p)));
                        seen.push((key, q.clone()));
                        q
                    }
                }
            };
            let kept = match p {
                Some(p) => {
                    let all = vec![true; pq.metadata().num_row_groups()];
                    pq.prune_prepared_among(&p, policy, &all).await?.row_groups
                }
                None => (0..pq.metadata().num_row_groups()).collect(),
            };
            Ok((kept, missing))
        }
        .boxed()
    });
    // The columns missing from every file so far, with the first file's reason.
    let mut missing_everywhere: Option<BTreeMap<String, sbbf_parquet::Error>> = None;
    let mut listed = order.map(Vec::into_iter);
    loop {
        let (file, result) = match listed.as_mut() {
            Some(listed) => match listed.next() {
                None => break,
                Some((name, true)) => {
                    if each(name, Ok(Vec::new())).is_break() {
                        return Ok(PruneSummary { warning });
                    }
                    continue;
                }
                Some(_) => match results.next().await {
                    Some(r) => r,
                    None => break,
                },
            },
            None => match results.next().await {
                Some(r) => r,
                None => break,
            },
        };
        let (kept, missing) = match result {
            Ok(r) => r,
            Err(e) => {
                if each(file, Err(e)).is_break() {
                    return Ok(PruneSummary { warning });
                }
                continue;
            }
        };
        // A hive partition key (`.../year=2024/...`) is a column of the table even though no
        // file stores it.
        let missing: Vec<_> = missing
            .into_iter()
            .filter(|(c, _)| !partition_key_in_path(&file, c))
            .collect();
        missing_everywhere = Some(match missing_everywhere {
            None => missing.into_iter().collect(),
            Some(m) => m
                .into_iter()
                .filter(|(c, _)| missing.iter().any(|(d, _)| d == c))
                .collect(),
        });
        if each(file, Ok(kept)).is_break() {
            return Ok(PruneSummary { warning });
        }
    }
    if let Some((column, first)) = missing_everywhere
        .filter(|_| strict)
        .and_then(|m| m.into_iter().next())
    {
        return Err(sbbf_parquet::Error::NoFileHasColumn {
            column,
            first: Some(Box::new(first)),
        });
    }
    Ok(PruneSummary { warning })
}

/// Whether `column` is a hive partition key in `file`'s path (a folder `column=value`).
fn partition_key_in_path(file: &str, column: &str) -> bool {
    file.split('/')
        .any(|seg| seg.strip_prefix(column).is_some_and(|r| r.starts_with('=')))
}

/// Every listed file in order with whether the index leaves it out, and a source of the
/// others.
type IndexSplit = (Vec<(String, bool)>, Source);

/// With a usable index at the table root `path`: every listed file in order with whether the
/// index proves `filters` false in all of it, and a source of the others; and a warning when
/// the index exists but cannot be used.
async fn index_rules_out(
    path: &str,
    filters: &Dnf,
    options: SourceOptions,
    (lake_options, head): (&lake::LakeOptions, Option<(String, crate::table::Loaded)>),
    snap: Option<Arc<lake::Snapshot>>,
) -> (Option<IndexSplit>, Option<String>) {
    let Ok(Some(root)) = Root::open_table(path) else {
        return (None, None);
    };
    let root = root.with_lake(lake_options.clone()).with_snapshot(snap);
    // The head read beside opening the table, when it is this index's.
    let head = head.filter(|(at, _)| *at == root.index_location());
    let root = root.with_head(head.map(|(_, h)| h));
    // One predicate for every file: the columns are checked per file later.
    let Some(predicate) = filters.predicate_for(|_| Ok(0), &mut Vec::new()) else {
        return (None, None);
    };
    let (listing, loaded) = futures::future::join(root.list(), root.load()).await;
    let ignore = |e: &dyn std::fmt::Display| {
        Some(format!("ignoring the index {}: {e}", root.index_location()))
    };
    let (Ok(listing), loaded) = (listing, loaded) else {
        // The direct listing will say what is wrong.
        return (None, None);
    };
    let loaded = match loaded {
        Ok(Some((l, _))) => l,
        Ok(None) => return (None, None),
        Err(e) => return (None, ignore(&e)),
    };
    match ruled_out(&root, &loaded, &listing, &predicate).await {
        Ok(out) => {
            let order: Vec<(String, bool)> = listing
                .iter()
                .zip(&out)
                .map(|(l, o)| (l.name.clone(), o.is_some()))
                .collect();
            let rest = listing
                .iter()
                .zip(&out)
                .filter(|(_, o)| o.is_none())
                .map(|(l, _)| l);
            (Some((order, root.source(rest, options))), None)
        }
        Err(e) => (None, ignore(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::partition_key_in_path;

    #[test]
    fn a_partition_key_is_a_whole_folder_name_before_its_equals_sign() {
        assert!(partition_key_in_path("t/year=2024/a.parquet", "year"));
        assert!(partition_key_in_path(
            "s3://b/t/year=2024/m=1/a.parquet",
            "m"
        ));
        assert!(!partition_key_in_path("t/years=2024/a.parquet", "year"));
        assert!(!partition_key_in_path("t/2024/a.parquet", "year"));
        assert!(!partition_key_in_path("t/year/a.parquet", "year"));
    }
}
