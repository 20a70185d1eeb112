"""`sbbf.add`, `sbbf.inspect`, `sbbf.verify` mirror the command: the same reports (and the
same output bytes) as `sbbf add/inspect/verify --format json`."""
import json
import os
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest

import sbbf
from conftest import TESTDATA, corpus_files


def cli_json(cli, *args):
    p = subprocess.run([cli, *args, "--format", "json"], capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_inspect_equals_cli_on_every_file(cli):
    for path in corpus_files():
        assert sbbf.inspect(path) == cli_json(cli, "inspect", str(path)), path.name
    path = TESTDATA / "pa_ints.parquet"
    assert sbbf.inspect(path, ["i8", "u8"]) == cli_json(cli, "inspect", str(path), "-c", "i8",
                                                        "-c", "u8")


def test_verify_equals_cli(cli):
    for name in ("pa_ints.parquet", "spark_types.parquet", "duckdb_float_bytes.parquet"):
        path = TESTDATA / name
        got = sbbf.verify(path, samples=500)
        assert got == cli_json(cli, "verify", str(path), "--samples", "500"), name
        assert got["false_negatives"] == 0 and got["chunks"]


def test_add_equals_cli(cli, tmp_path):
    src = TESTDATA / "pa_ints.parquet"  # u8 has no filter
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    got = sbbf.add(src, ["u8", "i64"], fpp=0.001, output=ours, replace=True)
    want = cli_json(cli, "add", str(src), "-c", "u8", "-c", "i64", "--fpp", "0.001", "--replace",
                    "-o", str(theirs))
    assert got["output"] == str(ours) and want["output"] == str(theirs)
    got["output"] = want["output"]
    assert got == want
    assert ours.read_bytes() == theirs.read_bytes()
    assert pq.read_table(ours).equals(pq.read_table(src))
    checked = sbbf.verify(ours, ["u8"])
    assert checked["false_negatives"] == 0 and len(checked["chunks"]) == 4
    v = pq.ParquetFile(ours).read_row_group(3, columns=["u8"]).column(0)[0].as_py()
    assert sbbf.probe(ours, "u8", [v])[0]["row_groups"][3]["values"][0]["result"] == "maybe"
    sized = sbbf.add(src, "u8", ndv=10, output=tmp_path / "ndv.parquet")
    assert {f["bytes_after"] for f in sized["filters"]} == {32}


def test_add_in_place_through_a_link(tmp_path):
    real = tmp_path / "real.parquet"
    shutil.copy(TESTDATA / "pa_ints.parquet", real)
    link = tmp_path / "link.parquet"
    os.symlink(real, link)
    before = real.stat().st_size
    report = sbbf.add(link, "u8", in_place=True)
    assert report["input"] == str(link) and report["output"] == str(real)
    assert link.is_symlink() and real.stat().st_size > before
    assert all(c["has_filter"] for c in sbbf.inspect(real, "u8")["chunks"])


def test_add_errors(tmp_path):
    src = TESTDATA / "pa_ints.parquet"
    out = tmp_path / "out.parquet"
    out.write_bytes(b"keep me")
    with pytest.raises(sbbf.FileError, match="exists"):
        sbbf.add(src, "u8", output=out)
    assert out.read_bytes() == b"keep me"
    sbbf.add(src, "u8", output=out, force=True)
    with pytest.raises(sbbf.InputError):
        sbbf.add(src, "u8", output=out, in_place=True)
    with pytest.raises(sbbf.InputError):
        sbbf.add(src, "u8")
    with pytest.raises(sbbf.InputError, match="already"):
        sbbf.add(src, "i64", output=tmp_path / "x.parquet")
    with pytest.raises(sbbf.InputError, match="no column"):
        sbbf.add(src, "nope", output=tmp_path / "y.parquet")
    with pytest.raises(sbbf.InputError, match="directory"):
        sbbf.add(tmp_path, "u8", in_place=True)
    with pytest.raises(sbbf.FileError, match="no such file"):
        sbbf.add(tmp_path / "missing.parquet", "u8", in_place=True)
    with pytest.raises(sbbf.InputError, match="between 0 and 1"):
        sbbf.add(src, "u8", fpp=2.0, output=tmp_path / "z.parquet")
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "z.parquet").exists()
    with pytest.raises(sbbf.FileError):
        sbbf.inspect(tmp_path / "missing.parquet")
    with pytest.raises(sbbf.InputError, match="no column"):
        sbbf.verify(src, ["nope"])


def _keys_for(name):
    """The keys of a testdata/encrypted file (testdata/encrypted/README.md), as `--keys` holds
    them; None where the file needs an AAD prefix it does not store."""
    if "disable_aad_storage" in name:
        return None
    if name.startswith(("encrypt_", "added_encrypt_")):
        return {"footer": "0123456789012345",
                "columns": {"double_field": "1234567890123450", "float_field": "1234567890123451"}}
    if name.startswith("uniform_encryption"):
        return {"footer": "0123456789012345"}
    return {"footer": "0123456789012345",
            "columns": {"secret": "1234567890123450", "name": "1234567890123451"}}


def test_inspect_and_verify_equal_cli_on_encrypted_files(cli, tmp_path):
    files = sorted((TESTDATA / "encrypted").glob("*.parquet.encrypted"))
    assert len(files) >= 15, files
    checked = 0
    for path in files:
        keys = _keys_for(path.name)
        if keys is None:
            continue
        kfile = tmp_path / "keys.json"
        kfile.write_text(json.dumps(keys))
        got = sbbf.inspect(path, keys=keys)
        assert got == cli_json(cli, "inspect", str(path), "--keys", str(kfile)), path.name
        p = subprocess.run([cli, "verify", str(path), "--keys", str(kfile), "--samples", "200",
                            "--format", "json"], capture_output=True, text=True)
        assert p.returncode in (0, 2), p.stderr
        assert sbbf.verify(path, samples=200, keys=keys) == json.loads(p.stdout), path.name
        checked += 1
    assert checked >= 15


def test_add_with_keys_equals_cli(cli, tmp_path):
    src = TESTDATA / "encrypted" / "pjava_plain_ctr_nobloom.parquet.encrypted"
    keys = _keys_for(src.name)
    kfile = tmp_path / "keys.json"
    kfile.write_text(json.dumps(keys))
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    got = sbbf.add(src, ["secret", "f"], output=ours, keys=keys)
    want = cli_json(cli, "add", str(src), "-c", "secret", "-c", "f", "-o", str(theirs),
                    "--keys", str(kfile))
    assert {k: v for k, v in got.items() if k != "output"} == \
        {k: v for k, v in want.items() if k != "output"}
    assert sbbf.verify(ours, ["secret", "f"], samples=100, keys=keys)["false_negatives"] == 0
    assert all(c["has_filter"] for c in sbbf.inspect(ours, ["secret"], keys=keys)["chunks"])


def test_a_chunk_hidden_by_its_encryption_has_no_confident_has_filter(cli):
    # Opened without the column keys, the encrypted columns' chunks cannot say whether they
    # have a filter: null, as the command says, never false.
    path = TESTDATA / "encrypted" / "pjava_plain_gcm.parquet.encrypted"
    got = sbbf.inspect(path)
    assert got == cli_json(cli, "inspect", str(path))
    hidden = [c for c in got["chunks"] if c["column"] in ("secret", "name")]
    assert hidden and all(c["has_filter"] is None for c in hidden)


def cli_lines(cli, *args, codes=(0, 1)):
    p = subprocess.run([cli, *args, "--format", "json"], capture_output=True, text=True,
                       env=os.environ.copy())
    assert p.returncode in codes, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def test_inspect_and_verify_take_directories_and_globs_as_the_command_does(cli, tmp_path):
    # A directory with a nested folder, a file without the asked column and a file that is
    # not Parquet: one report per file, in path order, as the command prints them.
    (tmp_path / "sub").mkdir()
    shutil.copy(TESTDATA / "pa_ints.parquet", tmp_path / "a.parquet")
    shutil.copy(TESTDATA / "pa_temporal.parquet", tmp_path / "sub" / "b.parquet")
    (tmp_path / "sub" / "c.parquet").write_bytes(b"not parquet at all")
    got = sbbf.inspect(tmp_path, "i64")
    assert isinstance(got, list)
    assert [r["file"] for r in got] == [str(tmp_path / p) for p in
                                        ("a.parquet", "sub/b.parquet", "sub/c.parquet")]
    assert got == cli_lines(cli, "inspect", str(tmp_path), "-c", "i64", codes=(2,))
    assert got[1]["columns_not_in_file"] == ["i64"] and "error" in got[2]
    checked = sbbf.verify(str(tmp_path / "*.parquet"), samples=100)
    assert isinstance(checked, list) and len(checked) == 1
    assert checked == cli_lines(cli, "verify", str(tmp_path / "*.parquet"), "--samples", "100")
    assert checked[0]["false_negatives"] == 0 and checked[0]["chunks"]
    with pytest.raises(sbbf.InputError, match="no file has column `nosuch`"):
        sbbf.inspect(tmp_path, "nosuch")
    with pytest.raises(sbbf.InputError, match="no file has column `nosuch`"):
        sbbf.verify(tmp_path, "nosuch")
    with pytest.raises(sbbf.FileError, match="no such file"):
        sbbf.inspect(tmp_path / "missing")
    with pytest.raises(sbbf.InputError, match="matches"):
        sbbf.verify(str(tmp_path / "*.nothing"))
    # One file stays one report, and its error is raised.
    assert isinstance(sbbf.inspect(tmp_path / "a.parquet"), dict)
    with pytest.raises(sbbf.FileError, match="c.parquet"):
        sbbf.inspect(tmp_path / "sub" / "c.parquet")
