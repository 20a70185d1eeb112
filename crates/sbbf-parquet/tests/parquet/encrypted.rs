//! Encrypted files (Parquet modular encryption): filters read with keys answer as parquet-java
//! answers (testdata/encrypted/answers, written by parquet-java's decrypting reader, never by
//! our code); without the keys, or when a module does not authenticate, "unknown" with the
//! reason, never "absent".

use bytes::Bytes;
use sbbf_parquet::crypto::{ChunkEncryption, CryptoError, Key, KeySet};
use sbbf_parquet::{Answer, Encoded, Error, FilterState, IoPolicy, ParquetFile};
use std::collections::BTreeMap;

fn path(name: &str) -> std::path::PathBuf {
    sbbf_testkit::testdata().join("encrypted").join(name)
}

fn bytes(name: &str) -> Bytes {
    Bytes::from(std::fs::read(path(name)).unwrap())
}

fn key(text: &str) -> Key {
    Key::parse(text).unwrap()
}

/// The parquet-testing keys (ASCII text, as in its README and parquet-java's tests).
fn testing_keys() -> KeySet {
    KeySet::new()
        .with_footer_key(key("0123456789012345"))
        .with_column_key("double_field", key("1234567890123450"))
        .with_column_key("float_field", key("1234567890123451"))
}

/// The keys tools/gen/java/PjCrypto.java writes with.
fn pjava_keys() -> KeySet {
    KeySet::new()
        .with_footer_key(key("0123456789012345"))
        .with_column_key("secret", key("1234567890123450"))
        .with_column_key("name", key("1234567890123451"))
}

const PJAVA: [&str; 4] = [
    "pjava_footer_gcm",
    "pjava_footer_ctr",
    "pjava_plain_gcm",
    "pjava_plain_ctr",
];

/// parquet-java's answers: (column, row group) -> [(plain bytes, present, maybe)].
type Answers = BTreeMap<(String, usize), Vec<(Vec<u8>, bool, bool)>>;

fn answers(stem: &str) -> Answers {
    let text = std::fs::read_to_string(path(&format!("answers/{stem}.tsv"))).unwrap();
    let mut out = Answers::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "{line}");
        let hex = f[2];
        let plain = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        out.entry((f[0].to_string(), f[1].parse().unwrap()))
            .or_default()
            .push((plain, f[3] == "1", f[4] == "1"));
    }
    assert!(!out.is_empty());
    out
}

/// Probes every answered value; returns how many rows were compared, and checks each against
/// parquet-java (`expect_filter`: which columns must have a readable filter).
fn compare(pq: &ParquetFile<Bytes>, answers: &Answers, readable: impl Fn(&str) -> bool) -> usize {
    let mut rows = 0;
    for ((column, rg), rows_here) in answers {
        let col = pq.column_index(column).unwrap();
        let values: Vec<Encoded> = rows_here
            .iter()
            .map(|(b, _, _)| Encoded::Candidates(vec![b.clone()]))
            .collect();
        let got = &pq.probe(col, &values, IoPolicy::default())[*rg];
        if !readable(column) {
            assert!(
                matches!(&got.filter, FilterState::Invalid(why) if why.starts_with("encrypted")),
                "{column} rg {rg}: {:?}",
                got.filter
            );
            assert!(got.answers.iter().all(|a| *a == Answer::Unknown));
            continue;
        }
        assert_eq!(got.filter, FilterState::Present, "{column} rg {rg}");
        for ((plain, present, maybe), answer) in rows_here.iter().zip(&got.answers) {
            if *present {
                assert_eq!(*answer, Answer::Maybe, "{column} rg {rg} {plain:02x?}");
            }
            let want = if *maybe {
                Answer::Maybe
            } else {
                Answer::Absent
            };
            assert_eq!(*answer, want, "{column} rg {rg} {plain:02x?}: parquet-java");
            rows += 1;
        }
    }
    rows
}

#[test]
fn parquet_testing_file_answers_as_parquet_java() {
    let name = "encrypt_columns_and_footer_bloom_filter.parquet.encrypted";
    let pq = ParquetFile::open_with_keys(bytes(name), &testing_keys()).unwrap();
    let e = pq.encryption().unwrap();
    assert!(e.footer_encrypted);
    let a = answers("encrypt_columns_and_footer_bloom_filter");
    assert_eq!(compare(&pq, &a, |_| true), 600);
    // Both filtered columns have absent answers too (so "absent" is really exercised).
    assert!(a.values().flatten().any(|(_, _, maybe)| !maybe));
}

#[test]
fn parquet_java_files_answer_as_parquet_java() {
    for stem in PJAVA {
        let pq =
            ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &pjava_keys())
                .unwrap_or_else(|e| panic!("{stem}: {e}"));
        let e = pq.encryption().unwrap();
        assert_eq!(e.footer_encrypted, stem.contains("footer"), "{stem}");
        assert_eq!(
            e.algorithm.name(),
            if stem.ends_with("ctr") {
                "AES_GCM_CTR_V1"
            } else {
                "AES_GCM_V1"
            }
        );
        assert!(e.signature_verified, "{stem}");
        let secret = pq.column_index("secret").unwrap();
        let f = pq.column_index("f").unwrap();
        let id = pq.column_index("id").unwrap();
        assert_eq!(e.chunk(0, id), ChunkEncryption::Plaintext);
        assert!(matches!(
            e.chunk(0, secret),
            ChunkEncryption::Readable { .. }
        ));
        assert!(matches!(e.chunk(1, f), ChunkEncryption::Readable { .. }));
        assert_eq!(compare(&pq, &answers(stem), |_| true), 6400, "{stem}");
    }
}

#[test]
fn missing_keys_answer_unknown_with_the_reason() {
    for stem in PJAVA {
        let a = answers(stem);
        let file = bytes(&format!("{stem}.parquet.encrypted"));
        if stem.contains("footer") {
            // Nothing can be read without the footer key.
            assert!(matches!(
                ParquetFile::open(file.clone()),
                Err(Error::Encrypted)
            ));
        } else {
            // A plaintext footer: the plaintext column answers, the encrypted ones do not.
            let pq = ParquetFile::open(file.clone()).unwrap();
            assert!(!pq.encryption().unwrap().signature_verified);
            compare(&pq, &a, |c| c == "id");
        }
        // The footer key alone: `f` (encrypted with the footer key) answers too.
        let footer_only = KeySet::new().with_footer_key(key("0123456789012345"));
        let pq = ParquetFile::open_with_keys(file.clone(), &footer_only).unwrap();
        compare(&pq, &a, |c| c == "id" || c == "f");
        // A wrong column key: that column is unknown, the reason says why.
        let wrong = pjava_keys().with_column_key("secret", key("1234567890123459"));
        let pq = ParquetFile::open_with_keys(file.clone(), &wrong).unwrap();
        compare(&pq, &a, |c| c != "secret");
        let secret = pq.column_index("secret").unwrap();
        let ChunkEncryption::Unreadable { reason, .. } = pq.encryption().unwrap().chunk(0, secret)
        else {
            panic!("{stem}: secret readable with a wrong key");
        };
        assert!(reason.contains("did not decrypt"), "{reason}");
    }
}

#[test]
fn wrong_footer_key_is_a_clear_error() {
    let wrong = pjava_keys().with_footer_key(key("0123456789012349"));
    for (stem, want) in [
        ("pjava_footer_gcm", CryptoError::FooterAuth),
        ("pjava_plain_gcm", CryptoError::FooterSignature),
    ] {
        match ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &wrong) {
            Err(Error::Crypto(e)) => assert_eq!(e, want, "{stem}"),
            Err(e) => panic!("{stem}: {e}"),
            Ok(_) => panic!("{stem}: opened with a wrong footer key"),
        }
    }
}

#[test]
fn altered_modules_are_unknown_not_absent() {
    let stem = "pjava_footer_gcm";
    let a = answers(stem);
    let file = std::fs::read(path(&format!("{stem}.parquet.encrypted"))).unwrap();
    let pq = ParquetFile::open_with_keys(Bytes::from(file.clone()), &pjava_keys()).unwrap();
    let secret = pq.column_index("secret").unwrap();
    let spans = pq.read_filters(secret, IoPolicy::default());
    let span = spans[1].as_ref().unwrap();
    assert_eq!(span.sealed_overhead, 32);
    assert_eq!(
        span.end() - span.offset,
        pq.filter_locations(secret)[1].length.unwrap() as u64
    );
    // One bit of the bitset module's ciphertext, then one of the header module's.
    for (at, what) in [(span.end() - 40, "bitset"), (span.offset + 20, "header")] {
        let mut bad = file.clone();
        bad[at as usize] ^= 0x10;
        let pq = ParquetFile::open_with_keys(Bytes::from(bad), &pjava_keys()).unwrap();
        let rows = &a[&("secret".to_string(), 1)];
        let values: Vec<Encoded> = rows
            .iter()
            .map(|(b, _, _)| Encoded::Candidates(vec![b.clone()]))
            .collect();
        let got = pq.probe(secret, &values, IoPolicy::default());
        match &got[1].filter {
            FilterState::Invalid(why) => assert!(
                why.contains(what) && why.contains("did not authenticate"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(got[1].answers.iter().all(|a| *a == Answer::Unknown));
        // The other row groups are untouched.
        assert_eq!(got[0].filter, FilterState::Present);
    }
}

#[test]
fn one_read_per_encrypted_filter_when_its_length_is_known() {
    let pq =
        ParquetFile::open_with_keys(bytes("pjava_footer_gcm.parquet.encrypted"), &pjava_keys())
            .unwrap();
    let secret = pq.column_index("secret").unwrap();
    let before = pq.io_stats();
    let v = Encoded::Candidates(vec![42i64.to_le_bytes().to_vec()]);
    let got = pq.probe(secret, &[v], IoPolicy::default());
    assert!(got.iter().all(|rg| rg.filter == FilterState::Present));
    let after = pq.io_stats();
    // The four filters are adjacent? Whatever the layout: one wave, whole modules.
    assert_eq!(after.waves - before.waves, 1);
    let lengths: u64 = pq
        .filter_locations(secret)
        .iter()
        .map(|l| l.length.unwrap() as u64)
        .sum();
    assert!(after.bytes - before.bytes >= lengths);
}

#[test]
fn parquet_testing_files_without_filters_open() {
    let footer_only = KeySet::new().with_footer_key(key("0123456789012345"));
    for (name, keys) in [
        ("uniform_encryption.parquet.encrypted", footer_only.clone()),
        (
            "encrypt_columns_and_footer.parquet.encrypted",
            testing_keys(),
        ),
        (
            "encrypt_columns_and_footer_ctr.parquet.encrypted",
            testing_keys(),
        ),
        (
            "encrypt_columns_plaintext_footer.parquet.encrypted",
            testing_keys(),
        ),
        (
            "encrypt_columns_and_footer_aad.parquet.encrypted",
            testing_keys(),
        ),
        (
            "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
            testing_keys().with_aad_prefix(b"tester".to_vec()),
        ),
    ] {
        let pq = ParquetFile::open_with_keys(bytes(name), &keys)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let e = pq.encryption().unwrap();
        for rg in 0..pq.metadata().num_row_groups() {
            for c in 0..pq.columns().len() {
                assert!(
                    !matches!(e.chunk(rg, c), ChunkEncryption::Unreadable { .. }),
                    "{name} rg {rg} col {c}: {:?}",
                    e.chunk(rg, c)
                );
            }
        }
        assert!(pq.metadata().file_metadata().num_rows() > 0);
    }
    // The prefix is needed where the file does not store it; a wrong one fails to
    // authenticate.
    let name = "encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted";
    assert!(matches!(
        ParquetFile::open_with_keys(bytes(name), &testing_keys()),
        Err(Error::Crypto(CryptoError::NeedAadPrefix))
    ));
    assert!(matches!(
        ParquetFile::open_with_keys(
            bytes(name),
            &testing_keys().with_aad_prefix(b"tester2".to_vec())
        ),
        Err(Error::Crypto(CryptoError::FooterAuth))
    ));
}

/// What tools/gen/gen_encrypted.sh stores in `secret` for row `i` (arrow-rs files).
fn arrowrs_secret(i: i64) -> i64 {
    (i * 7919 + 13) % 1_000_003
}

fn arrowrs_keys() -> KeySet {
    KeySet::new()
        .with_footer_key(key("0123456789012345"))
        .with_column_key("secret", key("1234567890123450"))
}

#[test]
fn arrowrs_plaintext_filters_on_encrypted_columns_are_flagged() {
    for stem in ["arrowrs_footer_leak", "arrowrs_plain_leak"] {
        let file = bytes(&format!("{stem}.parquet.encrypted"));
        let pq = ParquetFile::open_with_keys(file.clone(), &arrowrs_keys()).unwrap();
        let secret = pq.column_index("secret").unwrap();
        let reports = pq.inspect();
        let leaks: Vec<_> = reports
            .iter()
            .filter(|r| {
                r.problems.iter().any(|p| {
                    p == "plaintext Bloom filter on encrypted column `secret`: reveals its values"
                })
            })
            .collect();
        assert_eq!(leaks.len(), 4, "{stem}: {reports:#?}");
        assert!(leaks.iter().all(|r| r.column == "secret"));
        // Nothing else is a problem: the plaintext columns' filters are fine.
        assert_eq!(
            reports.iter().map(|r| r.problems.len()).sum::<usize>(),
            4,
            "{stem}"
        );
        // The leak is real: the plaintext bitset at the offset the encrypted metadata gives
        // finds every value of the row group without any key.
        let raw = std::fs::read(path(&format!("{stem}.parquet.encrypted"))).unwrap();
        let locations = pq.filter_locations(secret);
        for (rg, loc) in locations.iter().enumerate() {
            let at = loc.offset.unwrap() as usize;
            let (h, len) =
                sbbf_parquet::format::header::BloomFilterHeader::parse(&raw[at..]).unwrap();
            let bits = &raw[at + len..at + len + h.num_bytes as usize];
            let view = sbbf::SbbfRef::new(bits).unwrap();
            let found = (rg as i64 * 1000..rg as i64 * 1000 + 1000)
                .filter(|i| view.contains_hash(sbbf::hash(&arrowrs_secret(*i).to_le_bytes())))
                .count();
            assert_eq!(found, 1000, "{stem} rg {rg}");
        }
        // Probing does not use an unauthenticated plaintext filter of an encrypted column.
        let v = Encoded::Candidates(vec![arrowrs_secret(5).to_le_bytes().to_vec()]);
        for rg in pq.probe(secret, &[v], IoPolicy::default()) {
            assert!(
                matches!(&rg.filter, FilterState::Invalid(why) if why.contains("plaintext")),
                "{:?}",
                rg.filter
            );
            assert_eq!(rg.answers, [Answer::Unknown]);
        }
        // With the keys every filter is located, so none is stray.
        assert!(pq.stray_filter_headers().unwrap().is_empty(), "{stem}");

        // Without keys: the plaintext footer opens, and the leaking filters are found by their
        // bytes in regions no visible chunk accounts for.
        let offsets: Vec<u64> = locations.iter().map(|l| l.offset.unwrap() as u64).collect();
        if stem == "arrowrs_plain_leak" {
            let bare = ParquetFile::open(file.clone()).unwrap();
            let stray: Vec<u64> = bare
                .stray_filter_headers()
                .unwrap()
                .iter()
                .map(|h| h.offset)
                .collect();
            assert_eq!(stray, offsets);
            // The encrypted column's chunks are unknown, not "no filter".
            assert!(bare
                .inspect()
                .iter()
                .filter(|r| r.column == "secret")
                .all(|r| r.encryption.as_deref().unwrap().contains("not readable")));
        } else {
            assert!(matches!(
                ParquetFile::open(file.clone()),
                Err(Error::Encrypted)
            ));
            // Nothing is visible: the whole data area holds every filter, plaintext columns'
            // included.
            let footer_len =
                u32::from_le_bytes(raw[raw.len() - 8..raw.len() - 4].try_into().unwrap());
            let found = sbbf_parquet::crypto::scan_data_area(
                &file,
                (raw.len() - 8) as u64 - footer_len as u64,
            )
            .unwrap();
            let found: Vec<u64> = found.iter().map(|h| h.offset).collect();
            assert_eq!(found.len(), 12);
            assert!(offsets.iter().all(|o| found.contains(o)));
        }
    }
}

#[test]
fn parquet_java_filters_inspect_clean() {
    for stem in PJAVA {
        let pq =
            ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &pjava_keys())
                .unwrap();
        let reports = pq.inspect();
        assert_eq!(reports.len(), 16);
        for r in &reports {
            assert!(r.problems.is_empty(), "{stem}: {r:?}");
            assert!(r.bits_set.unwrap() > 0, "{stem}: {r:?}");
            assert_eq!(r.num_bytes, Some(1024), "{stem}: {r:?}");
            assert_eq!(r.encryption.is_none(), r.column == "id", "{stem}: {r:?}");
        }
        assert!(pq.stray_filter_headers().unwrap().is_empty(), "{stem}");
    }
}

/// An in-memory async reader (the async driver's path, as object stores use it).
struct Mem(Bytes);

impl parquet::arrow::async_reader::AsyncFileReader for Mem {
    fn get_bytes(
        &mut self,
        r: std::ops::Range<u64>,
    ) -> futures::future::BoxFuture<'_, parquet::errors::Result<Bytes>> {
        let b = self.0.slice(r.start as usize..r.end as usize);
        Box::pin(async move { Ok(b) })
    }
    fn get_metadata<'a>(
        &'a mut self,
        _: Option<&'a parquet::arrow::arrow_reader::ArrowReaderOptions>,
    ) -> futures::future::BoxFuture<
        'a,
        parquet::errors::Result<std::sync::Arc<parquet::file::metadata::ParquetMetaData>>,
    > {
        Box::pin(async { unreachable!("the footer is read by ParquetFile") })
    }
}

#[test]
fn prune_with_keys_keeps_what_parquet_java_says_may_hold_the_value() {
    use sbbf_parquet::prune::Predicate;
    use sbbf_parquet::Literal;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for stem in ["pjava_footer_ctr", "pjava_plain_gcm"] {
        let file = bytes(&format!("{stem}.parquet.encrypted"));
        let pq = ParquetFile::open_with_keys(file.clone(), &pjava_keys()).unwrap();
        let mut asy = rt
            .block_on(ParquetFile::open_async_with_keys(
                Mem(file.clone()),
                file.len() as u64,
                &pjava_keys(),
            ))
            .unwrap();
        let a = answers(stem);
        // value -> parquet-java's answer per row group, for values probed in all four.
        let mut per_value: BTreeMap<Vec<u8>, BTreeMap<usize, bool>> = BTreeMap::new();
        for ((column, rg), rows) in &a {
            if column == "secret" {
                for (plain, _, maybe) in rows {
                    per_value
                        .entry(plain.clone())
                        .or_default()
                        .insert(*rg, *maybe);
                }
            }
        }
        let mut checked = 0;
        for (plain, by_rg) in per_value.iter().filter(|(_, m)| m.len() == 4) {
            let v = i64::from_le_bytes(plain[..].try_into().unwrap());
            let p = Predicate::eq("secret", Literal::Int(v as i128));
            let want: Vec<usize> = by_rg.iter().filter(|(_, m)| **m).map(|(r, _)| *r).collect();
            let got = pq.prune(&p).unwrap();
            assert_eq!(got.row_groups, want, "{stem} {v}");
            let got_async = rt
                .block_on(asy.prune_async(&p, sbbf_parquet::read::async_driver::REMOTE_POLICY))
                .unwrap();
            assert_eq!(got_async, got, "{stem} {v}");
            checked += 1;
        }
        assert!(checked >= 50, "{stem}: {checked}");
        // Without the footer key, async opening fails the same way as sync.
        if stem.contains("footer") {
            assert!(matches!(
                rt.block_on(ParquetFile::open_async(
                    Mem(file.clone()),
                    file.len() as u64
                )),
                Err(Error::Encrypted)
            ));
        }
    }
}

#[test]
fn sealing_arrowrs_plaintext_filters_encrypts_them_and_zeroes_the_old_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["arrowrs_footer_leak", "arrowrs_plain_leak"] {
        let input = path(&format!("{stem}.parquet.encrypted"));
        let output = dir.path().join(format!("{stem}.sealed.parquet.encrypted"));
        let before = ParquetFile::open_with_keys(
            bytes(&format!("{stem}.parquet.encrypted")),
            &arrowrs_keys(),
        )
        .unwrap();
        let secret = before.column_index("secret").unwrap();
        let old: Vec<(u64, u64)> = before
            .filter_locations(secret)
            .iter()
            .map(|l| (l.offset.unwrap() as u64, l.length.unwrap() as u64))
            .collect();
        let report =
            sbbf_parquet::write::seal_plaintext_filters(&input, &output, &arrowrs_keys(), &[])
                .unwrap();
        assert_eq!(report.filters.len(), 4);
        assert!(report.filters.iter().all(|f| f.column == "secret"));
        let raw_in = std::fs::read(&input).unwrap();
        let raw_out = std::fs::read(&output).unwrap();
        // Everything before the old footer is the same, except the old filters: zeros.
        let footer = before.footer_start() as usize;
        let mut expect = raw_in[..footer].to_vec();
        for (o, l) in &old {
            expect[*o as usize..(*o + *l) as usize].fill(0);
        }
        assert!(raw_out[..footer] == expect[..], "{stem}");
        let after =
            ParquetFile::open_with_keys(Bytes::from(raw_out.clone()), &arrowrs_keys()).unwrap();
        assert_eq!(
            after.encryption().unwrap().footer_encrypted,
            stem.contains("footer")
        );
        assert_eq!(after.metadata().file_metadata().num_rows(), 4000);
        // The filters are now encrypted modules: no problem, nothing stray, every value found.
        assert!(
            after.inspect().iter().all(|r| r.problems.is_empty()),
            "{stem}"
        );
        assert!(after.stray_filter_headers().unwrap().is_empty());
        for rg in 0..4i64 {
            let values: Vec<Encoded> = (rg * 1000..rg * 1000 + 1000)
                .map(|i| Encoded::Candidates(vec![arrowrs_secret(i).to_le_bytes().to_vec()]))
                .collect();
            let got = &after.probe(secret, &values, IoPolicy::default())[rg as usize];
            assert_eq!(got.filter, FilterState::Present, "{stem} rg {rg}");
            assert!(got.answers.iter().all(|a| *a == Answer::Maybe));
        }
        // The other columns' chunks are untouched.
        for c in ["id", "name"] {
            let c = before.column_index(c).unwrap();
            assert_eq!(after.filter_locations(c), before.filter_locations(c));
        }
        // Without keys nothing of `secret` is found any more.
        if stem == "arrowrs_plain_leak" {
            let bare = ParquetFile::open(Bytes::from(raw_out)).unwrap();
            assert!(bare.stray_filter_headers().unwrap().is_empty());
        }
        // Sealing again: nothing to do.
        assert!(matches!(
            sbbf_parquet::write::seal_plaintext_filters(
                &output,
                &output,
                &arrowrs_keys(),
                &["secret".to_string()]
            ),
            Err(Error::Crypto(CryptoError::NothingToSeal))
        ));
    }
}

/// Files our `sbbf add --replace` (with keys) wrote from the arrow-rs files: parquet-java
/// decrypts and reads the sealed filters, and we answer as it does.
#[test]
fn parquet_java_reads_the_filters_we_sealed() {
    for stem in ["sealed_arrowrs_footer", "sealed_arrowrs_plain"] {
        let pq = ParquetFile::open_with_keys(
            bytes(&format!("{stem}.parquet.encrypted")),
            &arrowrs_keys(),
        )
        .unwrap();
        let a = answers(stem);
        // parquet-java found a filter for every chunk of `secret` (and the others).
        assert_eq!(a.keys().filter(|(c, _)| c == "secret").count(), 4, "{stem}");
        assert_eq!(compare(&pq, &a, |_| true), 4800, "{stem}");
    }
}

/// Hostile bytes in every part an encrypted file's reader trusts less than a plain one's:
/// each byte of the footer region (crypto metadata, lengths, nonces, tags, signature) flipped,
/// and the footer cut short. Errors or "unknown", never a panic, never "absent" for a stored
/// value.
#[test]
fn altered_footers_are_errors_or_unknown_never_panics() {
    for stem in ["pjava_footer_gcm", "pjava_plain_ctr", "arrowrs_plain_leak"] {
        let raw = std::fs::read(path(&format!("{stem}.parquet.encrypted"))).unwrap();
        let n = raw.len();
        let footer_len = u32::from_le_bytes(raw[n - 8..n - 4].try_into().unwrap()) as usize;
        let start = n - 8 - footer_len;
        let keys = if stem.starts_with("arrowrs") {
            arrowrs_keys()
        } else {
            pjava_keys()
        };
        let stored = Encoded::Candidates(vec![if stem.starts_with("arrowrs") {
            arrowrs_secret(0).to_le_bytes().to_vec()
        } else {
            answers(stem)[&("secret".to_string(), 0)][0].0.clone()
        }]);
        for at in (start..n).step_by(7) {
            let mut bad = raw.clone();
            bad[at] ^= 0x41;
            if let Ok(pq) = ParquetFile::open_with_keys(Bytes::from(bad), &keys) {
                if let Ok(c) = pq.column_index("secret") {
                    let got = pq.probe(c, std::slice::from_ref(&stored), IoPolicy::default());
                    assert_ne!(got[0].answers[0], Answer::Absent, "{stem} byte {at}");
                }
            }
        }
        for cut in [1, 5, 13, 28, 29, 100] {
            let mut bad = raw[..n - 8 - cut.min(footer_len)].to_vec();
            bad.extend_from_slice(&((footer_len - cut.min(footer_len)) as u32).to_le_bytes());
            bad.extend_from_slice(&raw[n - 4..]);
            let _ = ParquetFile::open_with_keys(Bytes::from(bad), &keys);
        }
    }
}

/// Files our `sbbf resize --fpp 0.05` (with keys) wrote from parquet-java's: every filter
/// folded, sealed again with its key (or plaintext for `id`), the footer encrypted or signed
/// again; parquet-java decrypts them, and we answer as it does.
#[test]
fn parquet_java_reads_the_filters_we_resized() {
    for stem in ["resized_pjava_footer_gcm", "resized_pjava_plain_ctr"] {
        let pq =
            ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &pjava_keys())
                .unwrap();
        let a = answers(stem);
        assert_eq!(a.len(), 16, "{stem}: parquet-java found every filter");
        assert_eq!(compare(&pq, &a, |_| true), 6400, "{stem}");
        for r in pq.inspect() {
            assert!(r.problems.is_empty(), "{stem}: {r:?}");
            assert!(r.num_bytes.unwrap() < 1024, "{stem}: {r:?}");
        }
    }
}

#[test]
fn resizing_an_encrypted_file_keeps_every_stored_value() {
    let dir = tempfile::tempdir().unwrap();
    for stem in PJAVA {
        let input = path(&format!("{stem}.parquet.encrypted"));
        let output = dir.path().join(format!("{stem}.resized"));
        let report =
            sbbf_parquet::write::resize_encrypted(&input, &output, &pjava_keys(), 0.05, &[])
                .unwrap();
        assert_eq!(report.filters.len(), 16, "{stem}");
        let raw_in = std::fs::read(&input).unwrap();
        let raw_out = std::fs::read(&output).unwrap();
        let before =
            ParquetFile::open_with_keys(Bytes::from(raw_in.clone()), &pjava_keys()).unwrap();
        let footer = before.footer_start() as usize;
        assert!(
            raw_out[..footer] == raw_in[..footer],
            "{stem}: data changed"
        );
        let after = ParquetFile::open_with_keys(Bytes::from(raw_out), &pjava_keys()).unwrap();
        let a = answers(stem);
        for ((column, rg), rows) in &a {
            let col = after.column_index(column).unwrap();
            let values: Vec<Encoded> = rows
                .iter()
                .map(|(b, _, _)| Encoded::Candidates(vec![b.clone()]))
                .collect();
            let got = &after.probe(col, &values, IoPolicy::default())[*rg];
            assert_eq!(got.filter, FilterState::Present, "{stem} {column} {rg}");
            for ((_, present, _), answer) in rows.iter().zip(&got.answers) {
                if *present {
                    assert_eq!(*answer, Answer::Maybe, "{stem} {column} {rg}");
                }
            }
        }
        // With only the footer key, the column-key chunks are left alone.
        let footer_only = KeySet::new().with_footer_key(key("0123456789012345"));
        let r = sbbf_parquet::write::resize_encrypted(&input, &output, &footer_only, 0.05, &[])
            .unwrap();
        assert!(r
            .filters
            .iter()
            .all(|f| f.column == "id" || f.column == "f"));
        assert_eq!(r.filters.len(), 8);
    }
}

/// parquet-java's value counts: (column, row group) -> (non-null values, distinct values), read
/// back by its decrypting record reader (answers/<stem>.counts.tsv).
fn counts(stem: &str) -> BTreeMap<(String, usize), (u64, u64)> {
    let text = std::fs::read_to_string(path(&format!("answers/{stem}.counts.tsv"))).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "{l}");
            (
                (f[0].to_string(), f[1].parse().unwrap()),
                (f[2].parse().unwrap(), f[3].parse().unwrap()),
            )
        })
        .collect()
}

/// Verifies every non-boolean column with the keys, and checks each chunk's counts against
/// parquet-java's; returns the reports.
fn verify_against_parquet_java(
    stem: &str,
    keys: &KeySet,
) -> Vec<sbbf_parquet::verify::ChunkReport> {
    let pq =
        ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), keys).unwrap();
    let columns: Vec<usize> = (0..pq.columns().len())
        .filter(|&c| pq.columns()[c].physical != parquet::basic::Type::BOOLEAN)
        .collect();
    let reports = pq.verify_encrypted(&columns, 200, |_, _| {}).unwrap();
    let want = counts(stem);
    assert_eq!(
        reports.len(),
        columns.len() * pq.metadata().num_row_groups()
    );
    for r in &reports {
        assert_eq!(r.not_verified, None, "{stem} {r:?}");
        assert_eq!(r.false_negatives, 0, "{stem} {r:?}");
        let (values, distinct) = want[&(r.column.clone(), r.row_group)];
        assert_eq!(
            (r.values, r.distinct),
            (values, distinct),
            "{stem} {} rg {}",
            r.column,
            r.row_group
        );
    }
    reports
}

/// `verify` with keys decrypts the data pages (AES_GCM_V1 and AES_GCM_CTR_V1, encrypted and
/// plaintext footers, parquet-java's and parquet-cpp's files, dictionary pages included): every
/// chunk's value count and distinct count are parquet-java's, and no stored value is absent.
#[test]
fn verify_with_keys_counts_what_parquet_java_counts() {
    for stem in PJAVA.iter().chain(&["pjava_plain_ctr_nobloom"]) {
        let reports = verify_against_parquet_java(stem, &pjava_keys());
        let with_filters = reports
            .iter()
            .filter(|r| r.filter == FilterState::Present)
            .count();
        assert_eq!(
            with_filters,
            if stem.ends_with("nobloom") { 4 } else { 16 },
            "{stem}"
        );
    }
    for stem in [
        "encrypt_columns_and_footer_bloom_filter",
        "encrypt_columns_and_footer",
        "encrypt_columns_and_footer_ctr",
        "encrypt_columns_plaintext_footer",
    ] {
        let reports = verify_against_parquet_java(stem, &testing_keys());
        if stem.ends_with("bloom_filter") {
            assert!(reports
                .iter()
                .filter(|r| r.column.ends_with("double_field") || r.column.ends_with("float_field"))
                .all(|r| r.filter == FilterState::Present));
        }
    }
    // parquet-cpp's chunks start with a dictionary page: the dictionary AADs are exercised.
    let pq = ParquetFile::open_with_keys(
        bytes("encrypt_columns_and_footer_ctr.parquet.encrypted"),
        &testing_keys(),
    )
    .unwrap();
    let c = pq.column_index("double_field").unwrap();
    assert!(pq
        .metadata()
        .row_group(0)
        .column(c)
        .dictionary_page_offset()
        .is_some());
    let image = pq.plaintext_image(0, c).unwrap();
    assert!(image
        .metadata
        .row_group(0)
        .column(c)
        .dictionary_page_offset()
        .is_some());
}

/// Without a column's key its chunks are reported "not verified" with the reason, never as
/// verified; the others are verified.
#[test]
fn verify_without_a_column_key_says_which_chunks_were_not_verified() {
    let keys = KeySet::new()
        .with_footer_key(key("0123456789012345"))
        .with_column_key("secret", key("1234567890123450"));
    for stem in PJAVA {
        let pq = ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &keys)
            .unwrap();
        // No columns chosen: the chunks of `name` are reported even though their filters cannot
        // be seen.
        let reports = pq.verify_encrypted(&[], 10, |_, _| {}).unwrap();
        assert_eq!(reports.len(), 16, "{stem}");
        for r in &reports {
            if r.column == "name" {
                let why = r.not_verified.as_deref().unwrap();
                assert!(why.contains("column key of `name` was not given"), "{why}");
                assert_eq!(r.values, 0);
            } else {
                assert_eq!(r.not_verified, None);
                assert!(r.values > 0);
            }
        }
        let name = pq.column_index("name").unwrap();
        assert!(matches!(
            pq.plaintext_image(1, name),
            Err(Error::Crypto(CryptoError::ChunkUnreadable {
                row_group: 1,
                ..
            }))
        ));
    }
    // A file without encryption is not verified this way.
    let plain = ParquetFile::open(Bytes::from(
        std::fs::read(sbbf_testkit::testdata().join("pa_ints.parquet")).unwrap(),
    ))
    .unwrap();
    assert!(plain.verify_encrypted(&[], 10, |_, _| {}).is_err());
}

/// Altered bytes in the chunks of encrypted columns: a page header (AES-GCM) that does not
/// authenticate, a GCM page that does not, a CTR page whose CRC (parquet-java writes one over
/// the page as stored) does not match: each an error, never a panic; and `verify` never
/// reports a chunk with altered bytes as verified.
#[test]
fn altered_pages_are_errors_never_panics() {
    for (stem, keys) in [
        ("pjava_footer_gcm", pjava_keys()),
        ("pjava_plain_ctr", pjava_keys()),
        ("encrypt_columns_and_footer", testing_keys()),
        ("encrypt_columns_and_footer_ctr", testing_keys()),
    ] {
        let raw = std::fs::read(path(&format!("{stem}.parquet.encrypted"))).unwrap();
        let pq = ParquetFile::open_with_keys(Bytes::from(raw.clone()), &keys).unwrap();
        let enc = pq.encryption().unwrap();
        let mut altered = 0;
        for c in ["secret", "f", "double_field", "float_field"] {
            let Ok(c) = pq.column_index(c) else { continue };
            let (start, len) = pq.metadata().row_group(0).column(c).byte_range();
            assert!(matches!(enc.chunk(0, c), ChunkEncryption::Readable { .. }));
            for at in (start..start + len).step_by(23) {
                let mut bad = raw.clone();
                bad[at as usize] ^= 0x10;
                let bad_pq = ParquetFile::open_with_keys(Bytes::from(bad), &keys).unwrap();
                let got = bad_pq.plaintext_image(0, c);
                // Every byte of a chunk is authenticated (GCM) or checked (lengths, CRC) in
                // parquet-java's files and in every file's GCM pages; parquet-cpp's CTR pages
                // carry no CRC: their altered bytes decode to other values, or fail to decode.
                if !stem.ends_with("_ctr") || stem.starts_with("pjava") {
                    assert!(
                        matches!(got, Err(Error::Crypto(CryptoError::Page { .. }))),
                        "{stem} column {c} byte {at}: {got:?}"
                    );
                }
                let _ = bad_pq.verify_encrypted(&[c], 10, |_, _| {});
                altered += 1;
            }
        }
        assert!(altered > 20, "{stem}: {altered}");
    }
}

/// Files our `add` (with keys) wrote into encrypted files that had no filters (parquet-cpp's
/// from parquet-testing, and parquet-java's with a filter on `id` only): parquet-java decrypts
/// them, finds a filter for every chunk we built, and we answer as it does; it counts the same
/// values as before.
#[test]
fn parquet_java_reads_the_filters_we_added() {
    for (stem, keys, added, total) in [
        ("added_encrypt_columns_and_footer", testing_keys(), 4, 575),
        (
            "added_encrypt_columns_and_footer_ctr",
            testing_keys(),
            4,
            575,
        ),
        (
            "added_encrypt_columns_plaintext_footer",
            testing_keys(),
            4,
            575,
        ),
        ("added_pjava_plain_ctr_nobloom", pjava_keys(), 16, 6400),
    ] {
        let pq = ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &keys)
            .unwrap();
        let a = answers(stem);
        // parquet-java found a filter for every chunk (ours, and its own of `id`).
        assert_eq!(a.len(), added, "{stem}");
        assert_eq!(compare(&pq, &a, |_| true), total, "{stem}");
        assert!(a.values().flatten().any(|(_, _, maybe)| !maybe));
        let reports = verify_against_parquet_java(stem, &keys);
        assert!(
            reports
                .iter()
                .filter(|r| r.filter == FilterState::Present)
                .count()
                >= added
        );
    }
}

/// `add` with keys, run again: the data before the old footer byte-identical, the filters'
/// bits (decrypted) those of the committed files parquet-java read; refusals without a key
/// and for columns that have filters.
#[test]
fn adding_filters_to_an_encrypted_file() {
    let dir = tempfile::tempdir().unwrap();
    for (stem, keys, columns) in [
        (
            "encrypt_columns_and_footer",
            testing_keys(),
            &["double_field", "float_field", "int32_field", "ba_field"][..],
        ),
        (
            "encrypt_columns_and_footer_ctr",
            testing_keys(),
            &["double_field", "float_field", "int32_field", "ba_field"][..],
        ),
        (
            "encrypt_columns_plaintext_footer",
            testing_keys(),
            &["double_field", "float_field", "int32_field", "ba_field"][..],
        ),
        (
            "pjava_plain_ctr_nobloom",
            pjava_keys(),
            &["secret", "name", "f"][..],
        ),
    ] {
        let input = path(&format!("{stem}.parquet.encrypted"));
        let output = dir.path().join(format!("{stem}.added"));
        let opts = sbbf_parquet::write::AddOptions {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            fpp: 0.01,
            ndv: None,
            replace: false,
        };
        let report =
            sbbf_parquet::write::add_encrypted(&input, &output, &keys, &opts, &mut |_, _| {})
                .unwrap();
        let before =
            ParquetFile::open_with_keys(bytes(&format!("{stem}.parquet.encrypted")), &keys)
                .unwrap();
        assert_eq!(
            report.filters.len(),
            columns.len() * before.metadata().num_row_groups()
        );
        let raw_in = std::fs::read(&input).unwrap();
        let raw_out = std::fs::read(&output).unwrap();
        let footer = before.footer_start() as usize;
        assert!(
            raw_out[..footer] == raw_in[..footer],
            "{stem}: data changed"
        );
        let after = ParquetFile::open_with_keys(Bytes::from(raw_out), &keys).unwrap();
        let committed =
            ParquetFile::open_with_keys(bytes(&format!("added_{stem}.parquet.encrypted")), &keys)
                .unwrap();
        assert_eq!(
            after.encryption().unwrap().footer_encrypted,
            before.encryption().unwrap().footer_encrypted
        );
        for col in columns {
            let c = after.column_index(col).unwrap();
            let ours: Vec<_> = after
                .read_filters(c, IoPolicy::default())
                .into_iter()
                .map(|f| f.unwrap().bitset)
                .collect();
            let theirs: Vec<_> = committed
                .read_filters(c, IoPolicy::default())
                .into_iter()
                .map(|f| f.unwrap().bitset)
                .collect();
            assert_eq!(ours, theirs, "{stem} {col}");
        }
        assert!(
            after.inspect().iter().all(|r| r.problems.is_empty()),
            "{stem}"
        );
        // Again: the columns have filters now.
        assert!(matches!(
            sbbf_parquet::write::add_encrypted(&output, &output, &keys, &opts, &mut |_, _| {}),
            Err(Error::Build(sbbf_parquet::BuildError::HasFilters { .. }))
        ));
        // Without an encrypted column's key: refused before anything is written.
        let footer_only = KeySet::new().with_footer_key(key("0123456789012345"));
        let nothing = dir.path().join(format!("{stem}.nothing"));
        assert!(matches!(
            sbbf_parquet::write::add_encrypted(
                &input,
                &nothing,
                &footer_only,
                &opts,
                &mut |_, _| {}
            ),
            Err(Error::Crypto(CryptoError::ChunkUnreadable { .. }))
        ));
        assert!(!nothing.exists());
    }
}
