//! Rewriting a file's footer (`FileMetaData`) with new Bloom filter locations, keeping
//! everything else: every field, including fields this crate does not know, is copied through
//! the Thrift compact protocol value by value. Only `ColumnMetaData` fields 14
//! (`bloom_filter_offset`) and 15 (`bloom_filter_length`) of the chosen column chunks change.

use crate::{Error, FooterError};
use std::collections::HashMap;
use std::io::Read;
use thrift::protocol::{
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol,
    TListIdentifier, TMapIdentifier, TOutputProtocol, TSetIdentifier, TStructIdentifier, TType,
};

/// A new location for one column chunk's filter: `(row group, leaf column) -> (offset, length)`.
pub type FilterEdits = HashMap<(usize, usize), (i64, i32)>;

/// New page-index offsets for column chunks that were moved: `(row group, leaf column) ->
/// (offset_index_offset, column_index_offset)`, each changed only when `Some`.
pub(crate) type IndexMoves = HashMap<(usize, usize), (Option<i64>, Option<i64>)>;

/// Where in the footer's struct tree the copier is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    FileMetaData,
    RowGroup(usize),
    ColumnChunk(usize, usize),
    ColumnMetaData(usize, usize),
    Other,
}

/// Returns `footer` (the Thrift `FileMetaData`, without length and magic) with the filter
/// locations of `edits` set, everything else unchanged.
///
/// ```
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let file = std::fs::read(path)?;
/// let len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into()?) as usize;
/// let footer = &file[file.len() - 8 - len..file.len() - 8];
/// // No edits: the same footer, byte for byte.
/// let copy = sbbf_parquet::format::footer::edit_filter_locations(footer, &Default::default())?;
/// assert_eq!(copy, footer);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn edit_filter_locations(footer: &[u8], edits: &FilterEdits) -> Result<Vec<u8>, Error> {
    edit_footer(footer, edits, &IndexMoves::new())
}

/// [`edit_filter_locations`], also moving page indexes (`ColumnChunk` fields 4 and 6).
/// A footer of an encrypted file (`FileMetaData.encryption_algorithm`) is refused.
pub(crate) fn edit_footer(
    footer: &[u8],
    edits: &FilterEdits,
    moves: &IndexMoves,
) -> Result<Vec<u8>, Error> {
    copy_footer(footer, edits, moves, None, None)
}

/// Copies a `FileMetaData` with the Copier in one of its modes: plain edits (an encrypted
/// footer refused), decoder mode (`replace`) or encrypted rewrite (`reseal`).
fn copy_footer(
    footer: &[u8],
    edits: &FilterEdits,
    moves: &IndexMoves,
    replace: Option<&HashMap<(usize, usize), Vec<u8>>>,
    reseal: Option<&dyn ColumnMetaCipher>,
) -> Result<Vec<u8>, Error> {
    let limit = footer.len().max(64);
    let config = crate::format::header::bounded_thrift(limit, 64).map_err(FooterError::Reencode)?;
    let mut cursor: &[u8] = footer;
    let mut out = Vec::with_capacity(footer.len() + 64 * edits.len());
    {
        let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
        let mut o = TCompactOutputProtocol::new(&mut out);
        let mut copier = Copier {
            edits,
            moves,
            applied: Default::default(),
            depth: 0,
            encrypted: false,
            replace,
            reseal,
        };
        copier
            .copy_struct(&mut i, &mut o, Ctx::FileMetaData)
            .map_err(FooterError::Reencode)?;
        if copier.encrypted && reseal.is_none() {
            return Err(Error::Encrypted);
        }
        if copier.applied.len() != edits.len() {
            return Err(FooterError::UnmatchedEdits {
                missing: edits.len() - copier.applied.len(),
                total: edits.len(),
            }
            .into());
        }
        o.flush().map_err(FooterError::Reencode)?;
    }
    Ok(out)
}

/// The `FileMetaData` of an encrypted file (decrypted, or a plaintext footer without its
/// signature) as the `parquet` crate's decoder reads it: `FileMetaData` fields 8 and 9 and
/// `ColumnChunk` fields 8 and 9 (the crypto metadata) dropped, and the `ColumnMetaData` of the
/// chunks in `replace` (decrypted, or placeholders) put in as field 3, replacing what is there.
#[cfg_attr(not(feature = "encryption"), allow(dead_code))]
pub(crate) fn decoder_footer(
    footer: &[u8],
    replace: &HashMap<(usize, usize), Vec<u8>>,
) -> Result<Vec<u8>, Error> {
    copy_footer(
        footer,
        &FilterEdits::new(),
        &IndexMoves::new(),
        Some(replace),
        None,
    )
}

/// Opens and seals the `encrypted_column_metadata` of column chunks, for an encrypted
/// rewrite (`encrypted_footer_edit`). The encryption layer implements it, so the footer
/// code holds no cipher and no key.
pub trait ColumnMetaCipher {
    /// The plaintext `ColumnMetaData` of chunk (`row_group`, `column`) from its stored module
    /// (length prefix included), or why it cannot be opened.
    fn open(&self, row_group: usize, column: usize, sealed: &[u8]) -> Result<Vec<u8>, String>;
    /// The stored module for chunk (`row_group`, `column`)'s plaintext `ColumnMetaData`
    /// (encrypted with the same key and AAD, a fresh nonce).
    fn seal(&self, row_group: usize, column: usize, plain: &[u8]) -> Result<Vec<u8>, String>;
}

/// The `FileMetaData` of an encrypted file (`file_metadata`, as stored) with the filter
/// locations of `edits` set: in the plaintext `ColumnMetaData` where a chunk has one, and
/// inside its `encrypted_column_metadata` (opened, edited and sealed again by `cipher`) where
/// it has that. The caller encrypts or signs the result as the footer.
#[cfg_attr(not(feature = "encryption"), allow(dead_code))]
pub(crate) fn encrypted_footer_edit(
    file_metadata: &[u8],
    cipher: &dyn ColumnMetaCipher,
    edits: &FilterEdits,
) -> Result<Vec<u8>, Error> {
    copy_footer(file_metadata, edits, &IndexMoves::new(), None, Some(cipher))
}

/// Rejects a footer whose schema claims more children for an element than the schema has
/// elements (or a negative number), or whose beginning up to the schema is not well-formed
/// Thrift. parquet 60.1's decoder reserves memory for the claimed count before it finds out that
/// the children are missing: a fuzzed 800-byte file asked for 9.6 GB, which aborts the process
/// under a memory limit. That decoder also takes varints of any length (wrapping their shifts)
/// and cuts them to the field's width, so a claim cannot be judged by a lenient reading: the
/// strict reading of the thrift crate must succeed up to the end of the schema. Everything after
/// the schema is left to parquet's decoder.
pub(crate) fn check_schema_counts(footer: &[u8]) -> Result<(), Error> {
    let config = crate::format::header::bounded_thrift(footer.len().max(64), 64)
        .map_err(FooterError::Schema)?;
    let mut cursor: &[u8] = footer;
    let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
    match schema_counts(&mut i) {
        Ok(None) => Ok(()),
        Ok(Some((element, claimed, elements))) => Err(FooterError::SchemaChildren {
            element,
            claimed,
            elements,
        }
        .into()),
        Err(e) => Err(FooterError::Schema(e).into()),
    }
}

/// Whether the footer's top-level `FileMetaData` has field 8, `encryption_algorithm`: the
/// plaintext footer of an encrypted file. Reads (and skips) the whole footer; `false` when it is
/// not well-formed Thrift before that field.
pub(crate) fn announces_encryption(footer: &[u8]) -> bool {
    let Ok(config) = crate::format::header::bounded_thrift(footer.len().max(64), 64) else {
        return false;
    };
    let mut cursor: &[u8] = footer;
    let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
    let mut scan = || -> thrift::Result<bool> {
        i.read_struct_begin()?;
        loop {
            let f = i.read_field_begin()?;
            match (f.field_type, f.id) {
                (TType::Stop, _) => return Ok(false),
                (_, Some(8)) => return Ok(true),
                (t, _) => i.skip(t)?,
            }
            i.read_field_end()?;
        }
    };
    scan().unwrap_or(false)
}

/// The first schema element whose `num_children` is impossible: `(index, claimed, elements)`.
fn schema_counts<R: Read>(
    i: &mut TCompactInputProtocol<R>,
) -> thrift::Result<Option<(usize, i64, usize)>> {
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => return Ok(None),
            // FileMetaData.schema: list<SchemaElement>.
            (TType::List, Some(2)) => {
                let l = i.read_list_begin()?;
                if l.element_type != TType::Struct {
                    return Ok(None);
                }
                let total = l.size.max(0) as usize;
                for element in 0..total {
                    i.read_struct_begin()?;
                    loop {
                        let g = i.read_field_begin()?;
                        match (g.field_type, g.id) {
                            (TType::Stop, _) => break,
                            // SchemaElement.num_children. Read as the varint it is, all 64
                            // bits: parquet's decoder cuts a longer varint down to 32 bits
                            // where the thrift crate refuses it, so the claim it would act on
                            // is only known from the whole value.
                            (TType::I32, Some(5)) => {
                                let claimed = i.read_i64()?;
                                if claimed < 0 || claimed >= total as i64 {
                                    return Ok(Some((element, claimed, total)));
                                }
                            }
                            (t, _) => i.skip(t)?,
                        }
                        i.read_field_end()?;
                    }
                    i.read_struct_end()?;
                }
                return Ok(None);
            }
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
}

struct Copier<'a> {
    edits: &'a FilterEdits,
    moves: &'a IndexMoves,
    /// The chunks whose edit was applied (once, or twice in an encrypted file's plaintext copy
    /// and encrypted copy of the same `ColumnMetaData`).
    applied: std::collections::HashSet<(usize, usize)>,
    depth: usize,
    encrypted: bool,
    /// Decoder mode ([`decoder_footer`]): crypto fields dropped, these `ColumnMetaData` put in.
    replace: Option<&'a HashMap<(usize, usize), Vec<u8>>>,
    /// Rewrite mode of an encrypted file ([`encrypted_footer_edit`]): a chunk's
    /// `encrypted_column_metadata` is decrypted, edited and encrypted again.
    reseal: Option<&'a dyn ColumnMetaCipher>,
}

pub(crate) type Out<'a> = TCompactOutputProtocol<&'a mut Vec<u8>>;

impl Copier<'_> {
    fn copy_struct<R: Read>(
        &mut self,
        i: &mut TCompactInputProtocol<R>,
        o: &mut Out<'_>,
        ctx: Ctx,
    ) -> thrift::Result<()> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(thrift::Error::Protocol(thrift::ProtocolError::new(
                thrift::ProtocolErrorKind::DepthLimit,
                "footer nesting too deep",
            )));
        }
        i.read_struct_begin()?;
        o.write_struct_begin(&TStructIdentifier::new("s"))?;
        let edit = match ctx {
            Ctx::ColumnMetaData(r, c) => self.edits.get(&(r, c)).copied(),
            _ => None,
        };
        let mut edit_written = false;
        loop {
            let f = i.read_field_begin()?;
            if f.field_type == TType::Stop {
                break;
            }
            let id = f.id.unwrap_or(0);
            if let Some(replace) = self.replace {
                let drop = match ctx {
                    Ctx::FileMetaData => id == 8 || id == 9,
                    Ctx::ColumnChunk(r, c) => {
                        id == 8 || id == 9 || (id == 3 && replace.contains_key(&(r, c)))
                    }
                    _ => false,
                };
                if drop {
                    i.skip(f.field_type)?;
                    i.read_field_end()?;
                    continue;
                }
            }
            if ctx == Ctx::FileMetaData && id == 8 {
                // encryption_algorithm: a plaintext footer of an encrypted file.
                self.encrypted = true;
            }
            if let (Ctx::ColumnChunk(r, c), Some(enc), 9, TType::String) =
                (ctx, self.reseal, id, f.field_type)
            {
                if self.edits.contains_key(&(r, c)) {
                    let sealed = i.read_bytes()?;
                    let resealed = self.reseal_column_metadata(enc, r, c, &sealed)?;
                    o.write_field_begin(&TFieldIdentifier::new("f", TType::String, 9))?;
                    o.write_bytes(&resealed)?;
                    o.write_field_end()?;
                    i.read_field_end()?;
                    continue;
                }
            }
            if let Ctx::ColumnChunk(r, c) = ctx {
                if let Some(&(oi, ci)) = self.moves.get(&(r, c)) {
                    let new = match (id, f.field_type) {
                        (4, TType::I64) => oi,
                        (6, TType::I64) => ci,
                        _ => None,
                    };
                    if let Some(v) = new {
                        i.read_i64()?;
                        o.write_field_begin(&TFieldIdentifier::new("f", TType::I64, id))?;
                        o.write_i64(v)?;
                        o.write_field_end()?;
                        i.read_field_end()?;
                        continue;
                    }
                }
            }
            if let Some((offset, length)) = edit {
                if id == 14 || id == 15 {
                    // The old location goes; the new one is written in field order below.
                    i.skip(f.field_type)?;
                    i.read_field_end()?;
                    continue;
                }
                if id > 15 && !edit_written {
                    write_location(o, offset, length)?;
                    edit_written = true;
                }
            }
            let child = match (ctx, id, f.field_type) {
                (Ctx::FileMetaData, 4, TType::List) => Ctx::FileMetaData, // row_groups list
                (Ctx::RowGroup(r), 1, TType::List) => Ctx::RowGroup(r),   // columns list
                (Ctx::ColumnChunk(r, c), 3, TType::Struct) => Ctx::ColumnMetaData(r, c),
                _ => Ctx::Other,
            };
            o.write_field_begin(&TFieldIdentifier::new("f", f.field_type, id))?;
            self.copy_value(i, o, f.field_type, child)?;
            o.write_field_end()?;
            i.read_field_end()?;
        }
        if let Some((offset, length)) = edit {
            if !edit_written {
                write_location(o, offset, length)?;
            }
            if let Ctx::ColumnMetaData(r, c) = ctx {
                self.applied.insert((r, c));
            }
        }
        if let (Ctx::ColumnChunk(r, c), Some(replace)) = (ctx, self.replace) {
            if let Some(meta) = replace.get(&(r, c)) {
                // Written last, out of field order: Thrift readers take fields in any order.
                let config = crate::format::header::bounded_thrift(meta.len().max(64), 64)?;
                let mut cursor: &[u8] = meta;
                let mut mi = TCompactInputProtocol::with_config(&mut cursor, config);
                o.write_field_begin(&TFieldIdentifier::new("meta_data", TType::Struct, 3))?;
                self.copy_struct(&mut mi, o, Ctx::ColumnMetaData(r, c))?;
                o.write_field_end()?;
            }
        }
        i.read_struct_end()?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        self.depth -= 1;
        Ok(())
    }

    /// Opens a chunk's `encrypted_column_metadata`, applies its edit, and seals it again.
    fn reseal_column_metadata(
        &mut self,
        cipher: &dyn ColumnMetaCipher,
        r: usize,
        c: usize,
        sealed: &[u8],
    ) -> thrift::Result<Vec<u8>> {
        let module = cipher.open(r, c, sealed).map_err(|why| bad(&why))?;
        let config = crate::format::header::bounded_thrift(module.len().max(64), 64)?;
        let mut cursor: &[u8] = &module;
        let mut mi = TCompactInputProtocol::with_config(&mut cursor, config);
        let mut plain = Vec::with_capacity(module.len() + 16);
        {
            let mut mo = TCompactOutputProtocol::new(&mut plain);
            self.copy_struct(&mut mi, &mut mo, Ctx::ColumnMetaData(r, c))?;
            mo.flush()?;
        }
        cipher.seal(r, c, &plain).map_err(|why| bad(&why))
    }

    /// Copies one value; `ctx` tells list elements apart where it matters (row groups in
    /// `FileMetaData.row_groups`, column chunks in `RowGroup.columns`).
    fn copy_value<R: Read>(
        &mut self,
        i: &mut TCompactInputProtocol<R>,
        o: &mut Out<'_>,
        t: TType,
        ctx: Ctx,
    ) -> thrift::Result<()> {
        match t {
            TType::Bool => o.write_bool(i.read_bool()?),
            TType::I08 => o.write_i8(i.read_i8()?),
            TType::I16 => o.write_i16(i.read_i16()?),
            TType::I32 => o.write_i32(i.read_i32()?),
            TType::I64 => o.write_i64(i.read_i64()?),
            TType::Double => o.write_double(i.read_double()?),
            TType::String => o.write_bytes(&i.read_bytes()?),
            TType::Uuid => o.write_uuid(&i.read_uuid()?),
            TType::Struct => self.copy_struct(i, o, ctx),
            TType::List => {
                let l = i.read_list_begin()?;
                o.write_list_begin(&TListIdentifier::new(l.element_type, l.size))?;
                for k in 0..l.size.max(0) as usize {
                    let element_ctx = match ctx {
                        Ctx::FileMetaData => Ctx::RowGroup(k),
                        Ctx::RowGroup(r) => Ctx::ColumnChunk(r, k),
                        _ => Ctx::Other,
                    };
                    self.copy_value(i, o, l.element_type, element_ctx)?;
                }
                i.read_list_end()?;
                o.write_list_end()
            }
            TType::Set => {
                let s = i.read_set_begin()?;
                o.write_set_begin(&TSetIdentifier::new(s.element_type, s.size))?;
                for _ in 0..s.size.max(0) {
                    self.copy_value(i, o, s.element_type, Ctx::Other)?;
                }
                i.read_set_end()?;
                o.write_set_end()
            }
            TType::Map => {
                let m = i.read_map_begin()?;
                o.write_map_begin(&TMapIdentifier::new(m.key_type, m.value_type, m.size))?;
                if m.size > 0 {
                    let (Some(k), Some(v)) = (m.key_type, m.value_type) else {
                        return Err(bad("map without element types"));
                    };
                    for _ in 0..m.size {
                        self.copy_value(i, o, k, Ctx::Other)?;
                        self.copy_value(i, o, v, Ctx::Other)?;
                    }
                }
                i.read_map_end()?;
                o.write_map_end()
            }
            other => Err(bad(&format!("unexpected Thrift type {other:?}"))),
        }
    }
}

/// Copies one Thrift value of type `t` as it is (structs field by field, unknown fields
/// included), with the copier's nesting limit: for other structures than the footer (a page
/// header rewritten by the encryption layer's plaintext image).
#[cfg_attr(not(feature = "encryption"), allow(dead_code))]
pub(crate) fn copy_thrift_value<R: Read>(
    i: &mut TCompactInputProtocol<R>,
    o: &mut Out<'_>,
    t: TType,
) -> thrift::Result<()> {
    let (edits, moves) = (FilterEdits::new(), IndexMoves::new());
    let mut copier = Copier {
        edits: &edits,
        moves: &moves,
        applied: Default::default(),
        depth: 0,
        encrypted: false,
        replace: None,
        reseal: None,
    };
    copier.copy_value(i, o, t, Ctx::Other)
}

fn bad(msg: &str) -> thrift::Error {
    thrift::Error::Protocol(thrift::ProtocolError::new(
        thrift::ProtocolErrorKind::InvalidData,
        msg,
    ))
}

fn write_location(o: &mut Out<'_>, offset: i64, length: i32) -> thrift::Result<()> {
    o.write_field_begin(&TFieldIdentifier::new(
        "bloom_filter_offset",
        TType::I64,
        14,
    ))?;
    o.write_i64(offset)?;
    o.write_field_end()?;
    o.write_field_begin(&TFieldIdentifier::new(
        "bloom_filter_length",
        TType::I32,
        15,
    ))?;
    o.write_i32(length)?;
    o.write_field_end()
}
