//! Pruning: every predicate shape and every coercion rule, on files from all four writers (the
//! rules one by one, on plain column types, are unit tests: `src/values/tests/coercion.rs`).
//!
//! The expected answers come from the corpora (arrow-rs and parquet-java readers), never from
//! our own code: a row group holding a value is never skipped, and a row group whose filter
//! arrow-rs says excludes the value is skipped.

use arrow_array::{
    ArrayRef, Date32Array, Decimal128Array, DictionaryArray, FixedSizeBinaryArray, Int32Array,
    Int64Array, Int8Array, StringArray, TimestampMicrosecondArray, UInt32Array,
};
use flate2::read::GzDecoder;
use sbbf_parquet::format::column::{ColumnType, Unit, ValueKind};
use sbbf_parquet::prune::{predicate_columns, Predicate};
use sbbf_parquet::values::stored::{coerce, Literal};
use sbbf_parquet::Encoded;
use sbbf_parquet::ParquetFile;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sbbf_testkit::{conformance_expected, conformance_files, repo};

fn rows(expected: &Path) -> Vec<Json> {
    let f = std::fs::File::open(expected).unwrap();
    std::io::BufReader::new(GzDecoder::new(f))
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .filter(|j: &Json| j["column"].is_string())
        .collect()
}

/// The literal an engine would hold for this row, typed by the column's logical type.
fn typed_literal(ty: &ColumnType, row: &Json) -> Literal {
    let text = row["value"].as_str().unwrap().to_string();
    let typed = &row["value_json_typed"];
    let phys = &row["physical_json"];
    match ty.kind {
        ValueKind::Int { .. } => Literal::Int(
            typed
                .as_i64()
                .map(|v| v as i128)
                .or_else(|| typed.as_u64().map(|v| v as i128))
                .unwrap(),
        ),
        ValueKind::Date => Literal::Date32(phys.as_i64().unwrap() as i32),
        ValueKind::Timestamp { unit, utc } => Literal::Timestamp {
            value: phys.as_i64().unwrap(),
            unit,
            utc,
        },
        ValueKind::Time(unit) => Literal::Time {
            value: phys.as_i64().unwrap(),
            unit,
        },
        ValueKind::Decimal { scale, .. } if phys.is_i64() => Literal::Decimal {
            unscaled: phys.as_i64().unwrap() as i128,
            scale: scale as i8,
        },
        ValueKind::Float | ValueKind::Double => {
            let f = match typed {
                Json::Number(n) => n.as_f64().unwrap(),
                Json::String(s) if s == "NaN" => f64::NAN,
                Json::String(s) if s == "inf" => f64::INFINITY,
                Json::String(s) if s == "-inf" => f64::NEG_INFINITY,
                other => panic!("float {other}"),
            };
            if ty.kind == ValueKind::Float {
                Literal::Float32(f as f32)
            } else {
                Literal::Float64(f)
            }
        }
        ValueKind::Binary => Literal::Binary(sbbf_parquet::values::text::parse_hex(&text).unwrap()),
        _ => Literal::Utf8(text),
    }
}

fn files_with_expected() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for (files, expected) in [
        (conformance_files(), conformance_expected()),
        (repo().join("testdata"), repo().join("fixtures/expected")),
    ] {
        for e in std::fs::read_dir(&expected).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let Some(stem) = name.strip_suffix(".jsonl.gz") else {
                continue;
            };
            let parquet = files.join(format!("{stem}.parquet"));
            if parquet.exists() {
                out.push((parquet, p));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn typed_equality_never_skips_a_holding_row_group_and_skips_what_filters_exclude() {
    let mut checked = 0usize;
    let mut writers = std::collections::BTreeSet::new();
    for (parquet, expected) in files_with_expected() {
        let pq = ParquetFile::open(std::fs::File::open(&parquet).unwrap()).unwrap();
        writers.insert(
            pq.metadata()
                .file_metadata()
                .created_by()
                .unwrap_or("")
                .split(' ')
                .next()
                .unwrap_or("")
                .to_string(),
        );
        // Up to 8 rows per (column, row group) keep the test quick.
        let mut sample: BTreeMap<(String, u64), Vec<Json>> = BTreeMap::new();
        for r in rows(&expected) {
            let key = (
                r["column"].as_str().unwrap().to_string(),
                r["row_group"].as_u64().unwrap(),
            );
            let v = sample.entry(key).or_default();
            if v.len() < 8 {
                v.push(r);
            }
        }
        let cached_columns: Vec<String> = sample.keys().map(|k| k.0.clone()).collect();
        let cached_refs: Vec<&str> = cached_columns.iter().map(|s| s.as_str()).collect();
        let cache = pq.load_filters(&cached_refs).unwrap();
        for ((column, rg), rows) in sample {
            let ty = pq.columns()[pq.column_index(&column).unwrap()].clone();
            for r in rows {
                let lit = typed_literal(&ty, &r);
                let p = Predicate::eq(column.clone(), lit.clone());
                let pruned = pq.prune(&p).unwrap();
                assert_eq!(pruned, cache.prune(&p).unwrap(), "cache differs");
                let kept = pruned.row_groups.contains(&(rg as usize));
                let ctx = format!(
                    "{} {column} rg {rg} {:?} as {lit:?}",
                    parquet.display(),
                    r["value"]
                );
                if r["present_in_data"] == true {
                    assert!(kept, "{ctx}: skipped a row group that holds the value");
                }
                // Where arrow-rs says the filter excludes the value, we skip, except for the
                // float values SQL equality never rules out (NaN; 0.0 also probes -0.0).
                let special = matches!(
                    ty.kind,
                    ValueKind::Float | ValueKind::Double | ValueKind::Float16
                ) && ["NaN", "0.0", "-0.0"].contains(&r["value"].as_str().unwrap());
                let multi = matches!(coerce(&ty, &lit), Encoded::Candidates(c) if c.len() > 1);
                if r["arrowrs_says_maybe"] == false && !special && !multi {
                    assert!(
                        !kept,
                        "{ctx}: not skipped though the filter excludes it: {}",
                        pruned.reasons[rg as usize]
                    );
                }
                if r["arrowrs_says_maybe"].is_null() {
                    assert!(kept, "{ctx}: no filter, must be kept");
                }
                checked += 1;
            }
        }
    }
    eprintln!("checked {checked} typed equalities; writers {writers:?}");
    assert!(checked > 5000);
    for w in ["parquet-cpp-arrow", "parquet-rs", "DuckDB", "parquet-mr"] {
        assert!(writers.contains(w), "no file written by {w}: {writers:?}");
    }
}

#[test]
fn arrow_scalars_become_literals() {
    let cases: Vec<(ArrayRef, Literal)> = vec![
        (Arc::new(Int8Array::from(vec![-5])), Literal::Int(-5)),
        (
            Arc::new(UInt32Array::from(vec![u32::MAX])),
            Literal::Int(u32::MAX as i128),
        ),
        (
            Arc::new(Int64Array::from(vec![1 << 40])),
            Literal::Int(1 << 40),
        ),
        (
            Arc::new(StringArray::from(vec!["x"])),
            Literal::Utf8("x".into()),
        ),
        (Arc::new(Date32Array::from(vec![3])), Literal::Date32(3)),
        (
            Arc::new(TimestampMicrosecondArray::from(vec![7])),
            Literal::Timestamp {
                value: 7,
                unit: Unit::Micros,
                utc: false,
            },
        ),
        (
            Arc::new(
                Decimal128Array::from(vec![1234])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
            Literal::Decimal {
                unscaled: 1234,
                scale: 2,
            },
        ),
        (
            Arc::new(FixedSizeBinaryArray::try_from_iter(vec![vec![1u8, 2]].into_iter()).unwrap()),
            Literal::Binary(vec![1, 2]),
        ),
        (
            Arc::new(DictionaryArray::<arrow_array::types::Int32Type>::from_iter(
                ["a", "b"],
            )),
            Literal::Utf8("a".into()),
        ),
    ];
    for (array, want) in cases {
        assert_eq!(Literal::from_arrow(array.as_ref(), 0), Some(want));
    }
    assert_eq!(
        Literal::from_arrow(&Int32Array::from(vec![None::<i32>]), 0),
        None
    );
}

#[test]
fn predicate_shapes() {
    // pt_data_index_bloom_encoding_with_length: one row group, strings "Hello", "world", ...
    let path = conformance_files().join("pt_data_index_bloom_encoding_with_length.parquet");
    let pq = ParquetFile::open(std::fs::File::open(path).unwrap()).unwrap();
    let s = |v: &str| Literal::Utf8(v.into());
    let present = Predicate::eq("String", s("Hello"));
    let absent = Predicate::eq("String", s("definitely not there 123"));
    let read = vec![0];
    let skip: Vec<usize> = vec![];
    assert_eq!(pq.prune(&present).unwrap().row_groups, read);
    assert_eq!(pq.prune(&absent).unwrap().row_groups, skip);
    // IN: skipped only when every element is absent.
    let in_some = Predicate::In("String".into(), vec![s("nope 1"), s("Hello")]);
    let in_none = Predicate::In("String".into(), vec![s("nope 1"), s("nope 2 zz")]);
    assert_eq!(pq.prune(&in_some).unwrap().row_groups, read);
    assert_eq!(pq.prune(&in_none).unwrap().row_groups, skip);
    assert_eq!(
        pq.prune(&Predicate::In("String".into(), vec![]))
            .unwrap()
            .row_groups,
        skip
    );
    // AND: any proven-false child skips; OR: all children must be false.
    let and = Predicate::And(vec![present.clone(), absent.clone()]);
    let or = Predicate::Or(vec![present.clone(), absent.clone()]);
    let or_none = Predicate::Or(vec![absent.clone(), in_none.clone()]);
    assert_eq!(pq.prune(&and).unwrap().row_groups, skip);
    assert_eq!(pq.prune(&or).unwrap().row_groups, read);
    assert_eq!(pq.prune(&or_none).unwrap().row_groups, skip);
    let nested = Predicate::And(vec![
        or.clone(),
        Predicate::Or(vec![in_none.clone(), present.clone()]),
    ]);
    assert_eq!(pq.prune(&nested).unwrap().row_groups, read);
    let pruned = pq.prune(&and).unwrap();
    assert!(
        pruned.reasons[0].is_skip() && pruned.reasons[0].to_string().starts_with("skip: "),
        "{:?}",
        pruned.reasons
    );
    assert_eq!(pruned.skipped(), vec![0]);
    // Unknown columns are errors that name the columns.
    assert!(pq
        .prune(&Predicate::eq("nope", s("x")))
        .unwrap_err()
        .to_string()
        .contains("String"));
    assert_eq!(predicate_columns(&nested), vec!["String"]);
}

#[test]
fn async_pruning_matches_sync() {
    use bytes::Bytes;
    use futures::future::BoxFuture;
    use futures::FutureExt;
    use parquet::arrow::async_reader::AsyncFileReader;
    use parquet::file::metadata::ParquetMetaData;

    struct Mem(Bytes);
    impl AsyncFileReader for Mem {
        fn get_bytes(
            &mut self,
            r: std::ops::Range<u64>,
        ) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
            let b = self.0.slice(r.start as usize..r.end as usize);
            async move { Ok(b) }.boxed()
        }
        fn get_metadata<'a>(
            &'a mut self,
            _: Option<&'a parquet::arrow::arrow_reader::ArrowReaderOptions>,
        ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
            async { unreachable!("the probe reads the footer itself") }.boxed()
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for name in [
        "pa_ints.parquet",
        "duckdb_nested.parquet",
        "spark_types.parquet",
        "arrowrs_temporal_nolength.parquet",
    ] {
        let path = repo().join("testdata").join(name);
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let sync = ParquetFile::open(bytes.clone()).unwrap();
        let mut asy = rt
            .block_on(ParquetFile::open_async(
                Mem(bytes.clone()),
                bytes.len() as u64,
            ))
            .unwrap();
        for c in sync.columns().to_vec() {
            let p = Predicate::Or(vec![
                Predicate::eq(c.path.clone(), Literal::Utf8("1".into())),
                Predicate::eq(c.path.clone(), Literal::Int(5)),
            ]);
            let a = sync.prune(&p).unwrap();
            let b = rt
                .block_on(asy.prune_async(&p, sbbf_parquet::read::async_driver::REMOTE_POLICY))
                .unwrap();
            assert_eq!(a, b, "{name} {}", c.path);
        }
    }
}

/// `IN` lists of thousands of values (each hashed once, each row group tested with the batch
/// kernel, one answer per row group) against first principles: every filter read whole, every
/// literal coerced and its candidates tested one by one with the filter crate's own probe. A
/// row group is skipped exactly when it has a usable filter and no literal may be in it (or
/// every literal is one the column can never hold). Mixed in: never-stored literals (300 in an
/// INT(8) column), NaN (always "maybe") and values from the file.
#[test]
fn big_in_lists_answer_as_each_literal_does() {
    let mut x = 0x2545f4914f6cdd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let cases: Vec<(&str, &str, Vec<Literal>)> = vec![
        (
            "pa_ints.parquet",
            "i64",
            (0..3000)
                .map(|_| Literal::Int(next() as i64 as i128))
                .collect(),
        ),
        (
            "pa_ints.parquet",
            "i32",
            (0..3000)
                .map(|_| Literal::Int(next() as i32 as i128))
                .collect(),
        ),
        (
            "pa_ints.parquet",
            "i8",
            (0..300).map(|i| Literal::Int(i as i128 - 150)).collect(),
        ),
        (
            "pa_ints.parquet",
            "i8",
            (128..600).map(|i| Literal::Int(i as i128)).collect(),
        ),
        (
            "pa_float_bytes.parquet",
            "str",
            (0..3000)
                .map(|_| Literal::Utf8(format!("{:x}", next() % 5000)))
                .collect(),
        ),
        (
            "pa_float_bytes.parquet",
            "f64",
            (0..2000)
                .map(|i| {
                    Literal::Float64(if i == 7 {
                        f64::NAN
                    } else {
                        (next() % 1000) as f64
                    })
                })
                .collect(),
        ),
        (
            "pa_float_bytes.parquet",
            "f64",
            (0..2000)
                .map(|_| Literal::Float64((next() % 1000) as f64 / 4.0))
                .collect(),
        ),
    ];
    let mut skipped = 0;
    let mut kept = 0;
    for (file, column, literals) in cases {
        let path = repo().join("testdata").join(file);
        let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        let col = pq.column_index(column).unwrap();
        let ty = pq.columns()[col].clone();
        let filters = pq.read_filters(col, sbbf_parquet::IoPolicy::default());
        let encoded: Vec<Encoded> = literals.iter().map(|l| coerce(&ty, l)).collect();
        let expected: Vec<bool> = filters
            .iter()
            .map(|f| {
                let view = f
                    .as_ref()
                    .ok()
                    .and_then(|s| sbbf::SbbfRef::new(&s.bitset).ok());
                let maybe = |e: &Encoded| match e {
                    Encoded::NeverStored(_) => false,
                    Encoded::AlwaysMaybe(_) => true,
                    Encoded::Candidates(c) => match view {
                        Some(v) => c.iter().any(|b| v.contains_hash(sbbf::hash(b))),
                        None => true,
                    },
                };
                // Skip: nothing may be there.
                !encoded.iter().any(maybe)
            })
            .collect();
        let pruned = pq
            .prune(&Predicate::In(column.to_string(), literals.clone()))
            .unwrap();
        let got: Vec<bool> = pruned.reasons.iter().map(|r| r.is_skip()).collect();
        assert_eq!(got, expected, "{file} {column}: {:?}", pruned.reasons);
        skipped += got.iter().filter(|s| **s).count();
        kept += got.iter().filter(|s| !**s).count();
    }
    // Both outcomes occur, so the comparison means something.
    assert!(skipped >= 3 && kept >= 3, "skipped {skipped}, kept {kept}");
}
