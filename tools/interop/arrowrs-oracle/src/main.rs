//! `arrowrs-oracle`: a fixture-generation tool built on the arrow-rs `parquet` crate.
//!
//! It is used by `tools/gen` to produce committed test data and expected answers; the
//! project's tests never run it. Subcommands:
//!
//! * `write IN.parquet OUT.parquet [options]`: read IN with arrow-rs and rewrite it with
//!   arrow-rs `ArrowWriter` and Bloom filter settings.
//! * `probe FILE` (JSON lines on stdin: `{"column","row_group","plain_hex"}`): print one JSON
//!   line per input line, `{"has_bloom_filter": bool, "maybe": bool|null}`, from arrow-rs
//!   `Sbbf::check` on the value decoded from `plain_hex` by physical type.
//! * `dump FILE`: one JSON line per column chunk with its metadata and the distinct plain
//!   encodings (hex) of every non-null physical value, decoded with the low-level column reader.
//!   With `--footer-key KEY [--column-key COLUMN=KEY ...] [--plaintext-footer]` (keys as ASCII
//!   text) the output is encrypted (Parquet modular encryption, arrow-rs' `encryption` feature).
//! * `strip-length IN OUT`: copy IN, rewriting only the footer so that no column chunk has
//!   `bloom_filter_length` (data and filter bytes unchanged).

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufWriter, Read, Write};
use std::process::ExitCode;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{
    Compression, ConvertedType, LogicalType, TimeUnit, Type as PhysicalType, ZstdLevel,
};
use parquet::bloom_filter::Sbbf;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{AsBytes, DataType, Int96};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader, ParquetMetaDataWriter};
use parquet::file::properties::{
    BloomFilterPosition, EnabledStatistics, ReaderProperties, WriterProperties, WriterVersion,
};
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::schema::types::{ColumnDescriptor, ColumnPath};
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("write") => cmd_write(&args[1..]),
        Some("probe") => cmd_probe(&args[1..]),
        Some("dump") => cmd_dump(&args[1..]),
        Some("strip-length") => cmd_strip_length(&args[1..]),
        _ => {
            eprintln!(
                "usage: arrowrs-oracle write IN OUT [--position end|after-row-group] [--rg-rows N] \
                 [--bloom COL[:NDV[:FPP]]]... [--bloom-all] [--dictionary on|off] \
                 [--dict-chunk-filters on|off] [--dict-page-limit BYTES] [--v2] [--compression none|snappy|zstd] [--created-by S]\n\
                 \x20      arrowrs-oracle probe FILE < probes.jsonl\n\
                 \x20      arrowrs-oracle dump FILE\n\
                 \x20      arrowrs-oracle strip-length IN OUT"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arrowrs-oracle: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn col_path(dotted: &str) -> ColumnPath {
    ColumnPath::new(dotted.split('.').map(str::to_string).collect())
}

// ---------------------------------------------------------------------------------------------
// write

fn cmd_write(args: &[String]) -> Res<()> {
    if args.len() < 2 {
        return Err("write needs IN and OUT".into());
    }
    let (input, output) = (&args[0], &args[1]);
    let mut props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_bloom_filter_position(BloomFilterPosition::End);
    let mut rg_rows = 1024usize;
    let mut footer_key: Option<Vec<u8>> = None;
    let mut column_keys: Vec<(String, Vec<u8>)> = Vec::new();
    let mut plaintext_footer = false;
    let mut i = 2;
    let next = |i: &mut usize| -> Res<String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("missing value after {}", args[*i - 1]).into())
    };
    while i < args.len() {
        match args[i].as_str() {
            "--position" => {
                let v = next(&mut i)?;
                props = props.set_bloom_filter_position(match v.as_str() {
                    "end" => BloomFilterPosition::End,
                    "after-row-group" => BloomFilterPosition::AfterRowGroup,
                    _ => return Err(format!("bad --position {v}").into()),
                });
            }
            "--rg-rows" => rg_rows = next(&mut i)?.parse()?,
            "--bloom" => {
                let v = next(&mut i)?;
                let mut parts = v.split(':');
                let col = col_path(parts.next().unwrap());
                props = props.set_column_bloom_filter_enabled(col.clone(), true);
                if let Some(ndv) = parts.next() {
                    props = props.set_column_bloom_filter_max_ndv(col.clone(), ndv.parse()?);
                }
                if let Some(fpp) = parts.next() {
                    props = props.set_column_bloom_filter_fpp(col, fpp.parse()?);
                }
            }
            "--bloom-all" => props = props.set_bloom_filter_enabled(true),
            "--dictionary" => props = props.set_dictionary_enabled(next(&mut i)? == "on"),
            "--dict-chunk-filters" => {
                props = props.set_bloom_filter_for_dictionary_encoded_chunks(next(&mut i)? == "on")
            }
            "--dict-page-limit" => {
                props = props.set_dictionary_page_size_limit(next(&mut i)?.parse()?)
            }
            "--v2" => props = props.set_writer_version(WriterVersion::PARQUET_2_0),
            "--compression" => {
                let v = next(&mut i)?;
                props = props.set_compression(match v.as_str() {
                    "none" => Compression::UNCOMPRESSED,
                    "snappy" => Compression::SNAPPY,
                    "zstd" => Compression::ZSTD(ZstdLevel::try_new(3)?),
                    _ => return Err(format!("bad --compression {v}").into()),
                });
            }
            "--created-by" => props = props.set_created_by(next(&mut i)?),
            "--footer-key" => footer_key = Some(next(&mut i)?.into_bytes()),
            "--column-key" => {
                let v = next(&mut i)?;
                let (c, k) = v.split_once('=').ok_or("--column-key COLUMN=KEY")?;
                column_keys.push((c.to_string(), k.as_bytes().to_vec()));
            }
            "--plaintext-footer" => plaintext_footer = true,
            other => return Err(format!("unknown option {other}").into()),
        }
        i += 1;
    }
    props = props.set_max_row_group_row_count(Some(rg_rows));
    if let Some(k) = footer_key {
        let mut enc = parquet::encryption::encrypt::FileEncryptionProperties::builder(k)
            .with_plaintext_footer(plaintext_footer);
        for (c, k) in column_keys {
            enc = enc.with_column_key(&c, k);
        }
        props = props.with_file_encryption_properties(enc.build()?);
    }
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(File::open(input)?)?.with_batch_size(rg_rows);
    let schema = builder.schema().clone();
    let reader = builder.build()?;
    let mut writer = ArrowWriter::try_new(File::create(output)?, schema, Some(props.build()))?;
    for batch in reader {
        writer.write(&batch?)?;
    }
    writer.close()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// probe

fn open_with_filters(path: &str) -> Res<SerializedFileReader<File>> {
    let opts = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    Ok(SerializedFileReader::new_with_options(
        File::open(path)?,
        opts,
    )?)
}

fn unhex(s: &str) -> Res<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex length: {s}").into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.into()))
        .collect()
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

fn check_typed(f: &Sbbf, ptype: PhysicalType, bytes: &[u8]) -> Res<bool> {
    let fixed = |n: usize| -> Res<()> {
        if bytes.len() == n {
            Ok(())
        } else {
            Err(format!("{ptype} value needs {n} bytes, got {}", bytes.len()).into())
        }
    };
    Ok(match ptype {
        PhysicalType::INT32 => {
            fixed(4)?;
            f.check(&i32::from_le_bytes(bytes.try_into()?))
        }
        PhysicalType::INT64 => {
            fixed(8)?;
            f.check(&i64::from_le_bytes(bytes.try_into()?))
        }
        PhysicalType::FLOAT => {
            fixed(4)?;
            f.check(&f32::from_le_bytes(bytes.try_into()?))
        }
        PhysicalType::DOUBLE => {
            fixed(8)?;
            f.check(&f64::from_le_bytes(bytes.try_into()?))
        }
        PhysicalType::INT96 => {
            fixed(12)?;
            let w = |k: usize| u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap());
            let mut v = Int96::new();
            v.set_data(w(0), w(1), w(2));
            f.check(&v)
        }
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => f.check(bytes),
        PhysicalType::BOOLEAN => return Err("BOOLEAN has no Bloom filter".into()),
    })
}

fn cmd_probe(args: &[String]) -> Res<()> {
    let path = args.first().ok_or("probe needs FILE")?;
    let reader = open_with_filters(path)?;
    let md = reader.metadata();
    let schema = md.file_metadata().schema_descr();
    let by_path: HashMap<String, usize> = (0..schema.num_columns())
        .map(|i| (schema.column(i).path().string(), i))
        .collect();
    // filters[rg][col], read once
    let mut filters: Vec<Vec<Option<Sbbf>>> = Vec::new();
    for rg in 0..md.num_row_groups() {
        let r = reader.get_row_group(rg)?;
        filters.push(
            (0..schema.num_columns())
                .map(|c| r.get_column_bloom_filter(c).cloned())
                .collect(),
        );
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let q: Value = serde_json::from_str(&line)?;
        let column = q["column"].as_str().ok_or("probe line needs column")?;
        let rg = q["row_group"]
            .as_u64()
            .ok_or("probe line needs row_group")? as usize;
        let bytes = unhex(
            q["plain_hex"]
                .as_str()
                .ok_or("probe line needs plain_hex")?,
        )?;
        let &ci = by_path
            .get(column)
            .ok_or_else(|| format!("no column {column}"))?;
        let ptype = schema.column(ci).physical_type();
        let f = filters
            .get(rg)
            .ok_or_else(|| format!("no row group {rg}"))?[ci]
            .as_ref();
        let has = md.row_group(rg).column(ci).bloom_filter_offset().is_some();
        let maybe = match f {
            Some(f) => json!(check_typed(f, ptype, &bytes)?),
            None => {
                if has {
                    return Err(
                        format!("arrow-rs could not read the filter of {column} rg {rg}").into(),
                    );
                }
                Value::Null
            }
        };
        writeln!(out, "{}", json!({"has_bloom_filter": has, "maybe": maybe}))?;
    }
    out.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// dump

fn unit(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::MILLIS => "MILLIS",
        TimeUnit::MICROS => "MICROS",
        TimeUnit::NANOS => "NANOS",
    }
}

/// Compact logical type, as in the conformance corpus (`NONE`, `INT(8,true)`, `DECIMAL(9,2)`, ...).
fn logical_text(d: &ColumnDescriptor) -> String {
    if let Some(lt) = d.logical_type_ref() {
        return match lt {
            LogicalType::String => "STRING".into(),
            LogicalType::Enum => "ENUM".into(),
            LogicalType::Json => "JSON".into(),
            LogicalType::Bson => "BSON".into(),
            LogicalType::Uuid => "UUID".into(),
            LogicalType::Float16 => "FLOAT16".into(),
            LogicalType::Date => "DATE".into(),
            LogicalType::Decimal(t) => format!("DECIMAL({},{})", t.precision, t.scale),
            LogicalType::Integer(t) => format!("INT({},{})", t.bit_width, t.is_signed),
            LogicalType::Time(t) => format!("TIME({},{})", unit(&t.unit), t.is_adjusted_to_u_t_c),
            LogicalType::Timestamp(t) => {
                format!("TIMESTAMP({},{})", unit(&t.unit), t.is_adjusted_to_u_t_c)
            }
            other => format!("{other:?}"),
        };
    }
    match d.converted_type() {
        ConvertedType::NONE => "NONE".into(),
        ConvertedType::UTF8 => "STRING".into(),
        ConvertedType::ENUM => "ENUM".into(),
        ConvertedType::JSON => "JSON".into(),
        ConvertedType::BSON => "BSON".into(),
        ConvertedType::DATE => "DATE".into(),
        ConvertedType::DECIMAL => format!("DECIMAL({},{})", d.type_precision(), d.type_scale()),
        ConvertedType::INT_8 => "INT(8,true)".into(),
        ConvertedType::INT_16 => "INT(16,true)".into(),
        ConvertedType::INT_32 => "INT(32,true)".into(),
        ConvertedType::INT_64 => "INT(64,true)".into(),
        ConvertedType::UINT_8 => "INT(8,false)".into(),
        ConvertedType::UINT_16 => "INT(16,false)".into(),
        ConvertedType::UINT_32 => "INT(32,false)".into(),
        ConvertedType::UINT_64 => "INT(64,false)".into(),
        ConvertedType::TIME_MILLIS => "TIME(MILLIS,true)".into(),
        ConvertedType::TIME_MICROS => "TIME(MICROS,true)".into(),
        ConvertedType::TIMESTAMP_MILLIS => "TIMESTAMP(MILLIS,true)".into(),
        ConvertedType::TIMESTAMP_MICROS => "TIMESTAMP(MICROS,true)".into(),
        other => format!("{other:?}"),
    }
}

/// Read every record of a typed column reader; returns (levels, non-null values).
fn read_all<T: DataType>(
    mut r: ColumnReaderImpl<T>,
    mut enc: impl FnMut(&T::T) -> Vec<u8>,
) -> Res<(usize, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut levels = 0usize;
    let (mut defs, mut reps, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        defs.clear();
        reps.clear();
        vals.clear();
        let (records, values, nlevels) =
            r.read_records(4096, Some(&mut defs), Some(&mut reps), &mut vals)?;
        if records == 0 && values == 0 && nlevels == 0 {
            break;
        }
        levels += nlevels;
        out.extend(vals[..values].iter().map(&mut enc));
    }
    Ok((levels, out))
}

fn cmd_dump(args: &[String]) -> Res<()> {
    let path = args.first().ok_or("dump needs FILE")?;
    let reader = SerializedFileReader::new(File::open(path)?)?;
    let md = reader.metadata();
    let fm = md.file_metadata();
    let schema = fm.schema_descr();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    writeln!(
        out,
        "{}",
        json!({
            "kind": "file",
            "created_by": fm.created_by(),
            "num_rows": fm.num_rows(),
            "row_group_rows": (0..md.num_row_groups()).map(|i| md.row_group(i).num_rows()).collect::<Vec<_>>(),
        })
    )?;
    for rg in 0..md.num_row_groups() {
        let rgr = reader.get_row_group(rg)?;
        for ci in 0..schema.num_columns() {
            let d = schema.column(ci);
            let cc = md.row_group(rg).column(ci);
            let ptype = d.physical_type();
            let (levels, values): (usize, Vec<Vec<u8>>) = match rgr.get_column_reader(ci)? {
                ColumnReader::BoolColumnReader(r) => read_all(r, |v: &bool| vec![*v as u8])?,
                ColumnReader::Int32ColumnReader(r) => {
                    read_all(r, |v: &i32| v.to_le_bytes().to_vec())?
                }
                ColumnReader::Int64ColumnReader(r) => {
                    read_all(r, |v: &i64| v.to_le_bytes().to_vec())?
                }
                ColumnReader::Int96ColumnReader(r) => {
                    read_all(r, |v: &Int96| v.as_bytes().to_vec())?
                }
                ColumnReader::FloatColumnReader(r) => {
                    read_all(r, |v: &f32| v.to_le_bytes().to_vec())?
                }
                ColumnReader::DoubleColumnReader(r) => {
                    read_all(r, |v: &f64| v.to_le_bytes().to_vec())?
                }
                ColumnReader::ByteArrayColumnReader(r) => read_all(r, |v| v.data().to_vec())?,
                ColumnReader::FixedLenByteArrayColumnReader(r) => {
                    read_all(r, |v| v.data().to_vec())?
                }
            };
            let distinct: BTreeSet<String> = values.iter().map(|v| hex(v)).collect();
            writeln!(
                out,
                "{}",
                json!({
                    "kind": "chunk",
                    "column": d.path().string(),
                    "row_group": rg,
                    "physical_type": ptype.to_string(),
                    "logical_type": logical_text(&d),
                    "type_length": if ptype == PhysicalType::FIXED_LEN_BYTE_ARRAY { json!(d.type_length()) } else { Value::Null },
                    "max_def": d.max_def_level(),
                    "max_rep": d.max_rep_level(),
                    "has_bloom_filter": cc.bloom_filter_offset().is_some(),
                    "bloom_filter_offset": cc.bloom_filter_offset(),
                    "bloom_filter_length": cc.bloom_filter_length(),
                    "encodings": cc.encodings().map(|e| e.to_string()).collect::<Vec<_>>(),
                    "compression": cc.compression().to_string(),
                    "num_levels": levels,
                    "num_values": values.len(),
                    "distinct_hex": distinct,
                })
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// strip-length

fn cmd_strip_length(args: &[String]) -> Res<()> {
    if args.len() != 2 {
        return Err("strip-length needs IN and OUT".into());
    }
    let mut data = Vec::new();
    File::open(&args[0])?.read_to_end(&mut data)?;
    let n = data.len();
    if n < 12 || &data[n - 4..] != b"PAR1" {
        return Err("not a Parquet file".into());
    }
    let footer_len = u32::from_le_bytes(data[n - 8..n - 4].try_into()?) as usize;
    let meta_start = n - 8 - footer_len;
    let md: ParquetMetaData =
        ParquetMetaDataReader::new().parse_and_finish(&File::open(&args[0])?)?;
    let row_groups = md
        .row_groups()
        .iter()
        .cloned()
        .map(|rg| {
            let cols = rg
                .columns()
                .iter()
                .cloned()
                .map(|c| c.into_builder().set_bloom_filter_length(None).build())
                .collect::<Result<Vec<_>, _>>()?;
            rg.into_builder().set_column_metadata(cols).build()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let new_md = md.into_builder().set_row_groups(row_groups).build();
    let mut footer = Vec::new();
    ParquetMetaDataWriter::new(&mut footer, &new_md).finish()?;
    let mut out = BufWriter::new(File::create(&args[1])?);
    out.write_all(&data[..meta_start])?;
    out.write_all(&footer)?;
    out.flush()?;
    // self-check: reread and verify
    let reread = SerializedFileReader::new(File::open(&args[1])?)?;
    for rg in reread.metadata().row_groups() {
        for c in rg.columns() {
            if c.bloom_filter_length().is_some() {
                return Err("bloom_filter_length still present".into());
            }
        }
    }
    Ok(())
}
