//! Writing the index's bytes: the header, the directory (file table, column sections, head)
//! and the trailer.

use super::types::*;
use super::{MAGIC, TRAILER_LEN, VERSION};
use parquet::basic::Type as PhysicalType;
use sbbf_parquet::format::column::{ColumnType, Unit, ValueKind};

/// Appends LEB128 varints, strings and fixed-width numbers.
#[derive(Default)]
pub(crate) struct Out(pub(crate) Vec<u8>);

impl Out {
    pub(crate) fn var(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    pub(crate) fn zig(&mut self, v: i64) {
        self.var(((v << 1) ^ (v >> 63)) as u64);
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.var(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn flag(&mut self, v: bool) {
        self.0.push(v as u8);
    }
}

/// The 16 header bytes.
pub(crate) fn header() -> Vec<u8> {
    let mut o = Out::default();
    o.0.extend_from_slice(MAGIC);
    o.u32(VERSION);
    o.u32(0);
    o.0
}

/// The bytes that follow the group sections when those end at `at`: the file table, one
/// section per column, then the head (what the trailer points to). Returns them and where in
/// them the head starts.
pub(crate) fn encode_directory(d: &Directory, at: u64) -> (Vec<u8>, usize) {
    let mut o = Out::default();
    let section = |o: &Out, start: usize| Section {
        offset: at + start as u64,
        len: (o.0.len() - start) as u64,
        crc: crc32fast::hash(&o.0[start..]),
    };
    // The file table: paths front-coded (sorted paths share long prefixes: folders, the
    // writer's name pattern), an object's ETag as its XXH64.
    let mut schemas: Vec<u64> = Vec::new();
    let mut schema_no: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut prev: &[u8] = b"";
    for f in &d.files {
        let p = f.path.as_bytes();
        let shared = prev.iter().zip(p).take_while(|(a, b)| a == b).count();
        o.var(shared as u64);
        o.var((p.len() - shared) as u64);
        o.0.extend_from_slice(&p[shared..]);
        prev = p;
        o.var(f.size);
        match &f.stamp {
            Stamp::Local {
                ino,
                mtime_ns,
                ctime_ns,
            } => {
                o.u8(2);
                o.var(*ino);
                o.zig(*mtime_ns);
                // As the distance from mtime: mostly a few bytes (a written file's times are
                // one instant), where a whole time takes nine.
                o.zig(ctime_ns.wrapping_sub(*mtime_ns));
            }
            Stamp::Object {
                last_modified_ms,
                etag,
            } => {
                o.u8(1);
                o.zig(*last_modified_ms);
                match etag {
                    Some(h) => {
                        o.u8(1);
                        o.u64(*h);
                    }
                    None => o.u8(0),
                }
            }
        }
        match &f.row_counts {
            Some(rows) => {
                o.u8(1);
                o.var(rows.len() as u64);
                for r in rows {
                    o.zig(*r);
                }
            }
            None => o.u8(0),
        }
        match f.schema {
            Some(h) => {
                let n = *schema_no.entry(h).or_insert_with(|| {
                    schemas.push(h);
                    schemas.len() - 1
                });
                o.var(n as u64 + 1);
            }
            None => o.u8(0),
        }
    }
    let files = section(&o, 0);
    // One section per column: per file 0 (no such leaf) or type + 1, then every group's
    // entries, file numbers as differences from the entry before.
    let mut sections = Vec::with_capacity(d.columns.len());
    for c in &d.columns {
        let start = o.0.len();
        for t in &c.file_types {
            o.var(t.map_or(0, |t| t as u64 + 1));
        }
        for g in &c.groups {
            let mut last = 0i64;
            for e in &g.entries {
                o.zig(e.file as i64 - last);
                last = e.file as i64;
                o.var(e.row_group as u64);
                o.u8(e.folds);
                o.u32(e.fpp.to_bits());
            }
        }
        sections.push(section(&o, start));
    }
    // The head.
    let head = o.0.len();
    o.var(d.created_ms);
    o.str(&d.root);
    match d.target_fpp {
        Some(p) => {
            o.u8(1);
            o.u64(p.to_bits());
        }
        None => o.u8(0),
    }
    o.u8(u8::from(d.explicit_columns));
    o.var(d.files.len() as u64);
    put_section(&mut o, &files);
    o.var(schemas.len() as u64);
    for h in &schemas {
        o.u64(*h);
    }
    o.var(d.types.len() as u64);
    for t in &d.types {
        encode_type(&mut o, t);
    }
    o.var(d.columns.len() as u64);
    for (c, s) in d.columns.iter().zip(&sections) {
        o.str(&c.path);
        put_section(&mut o, s);
        let types: std::collections::BTreeSet<u32> =
            c.file_types.iter().flatten().copied().collect();
        o.var(types.len() as u64);
        for t in types {
            o.var(t as u64);
        }
        o.var(c.groups.len() as u64);
        for g in &c.groups {
            o.var(g.blocks as u64);
            o.var(g.entries.len() as u64);
            put_section(
                &mut o,
                &Section {
                    offset: g.offset,
                    len: g.len,
                    crc: g.crc,
                },
            );
        }
    }
    // Format 4: the table version, last (format 3 heads end before it); format 5: then the
    // table's column names at it (empty: none), its commit's mark (size + 1, 0: none; then
    // the ETag) and its data manifests (a flag, then their count and locations); format 6:
    // then the Iceberg metadata file and manifest list (empty: none).
    if let Some(t) = &d.table {
        o.str(&t.format);
        o.zig(t.version);
        o.str(t.names.as_deref().unwrap_or_default());
        match &t.mark {
            Some(m) => {
                o.var(m.size.saturating_add(1));
                o.str(&m.etag);
            }
            None => o.var(0),
        }
        match &t.manifests {
            Some(m) => {
                o.flag(true);
                o.var(m.len() as u64);
                for path in m {
                    o.str(path);
                }
            }
            None => o.flag(false),
        }
        o.str(t.metadata.as_deref().unwrap_or_default());
        o.str(t.list.as_deref().unwrap_or_default());
    }
    (o.0, head)
}

pub(crate) fn put_section(o: &mut Out, s: &Section) {
    o.u64(s.offset);
    o.u64(s.len);
    o.u32(s.crc);
}

fn encode_type(o: &mut Out, t: &ColumnType) {
    o.str(&t.path);
    o.u8(physical_code(t.physical));
    o.zig(t.type_length as i64);
    let unit = |u: Unit| match u {
        Unit::Millis => 0u8,
        Unit::Micros => 1,
        Unit::Nanos => 2,
    };
    match t.kind {
        ValueKind::Boolean => o.u8(0),
        ValueKind::Int { bits, signed } => {
            o.u8(1);
            o.u8(bits);
            o.u8(u8::from(signed));
        }
        ValueKind::Date => o.u8(2),
        ValueKind::Time(u) => {
            o.u8(3);
            o.u8(unit(u));
        }
        ValueKind::Timestamp { unit: u, utc } => {
            o.u8(4);
            o.u8(unit(u));
            o.u8(u8::from(utc));
        }
        ValueKind::Decimal { precision, scale } => {
            o.u8(5);
            o.var(precision as u64);
            o.var(scale as u64);
        }
        ValueKind::Float => o.u8(6),
        ValueKind::Double => o.u8(7),
        ValueKind::Float16 => o.u8(8),
        ValueKind::String => o.u8(9),
        ValueKind::Binary => o.u8(10),
        ValueKind::Uuid => o.u8(11),
        ValueKind::Int96 => o.u8(12),
    }
    match &t.logical {
        Some(l) => {
            o.u8(1);
            o.str(l);
        }
        None => o.u8(0),
    }
}

fn physical_code(t: PhysicalType) -> u8 {
    match t {
        PhysicalType::BOOLEAN => 0,
        PhysicalType::INT32 => 1,
        PhysicalType::INT64 => 2,
        PhysicalType::INT96 => 3,
        PhysicalType::FLOAT => 4,
        PhysicalType::DOUBLE => 5,
        PhysicalType::BYTE_ARRAY => 6,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 7,
    }
}

/// The 40 trailer bytes for a head at `dir_offset` of `dir_len` bytes.
pub(crate) fn trailer(dir_offset: u64, dir_len: u64, dir_crc: u32) -> Vec<u8> {
    let mut o = Out::default();
    o.u64(dir_offset);
    o.u64(dir_len);
    o.u64(dir_offset + dir_len + TRAILER_LEN);
    o.u32(VERSION);
    o.u32(dir_crc);
    o.0.extend_from_slice(MAGIC);
    o.0
}
