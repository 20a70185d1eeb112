"""`sbbf.probe` on object-store URLs (a moto S3 server on a loopback port): the objects the
command prints for the same URL, for one object and for a prefix."""
import json
import os
from pathlib import Path
import socket
import subprocess
import sys
import time
import urllib.request

import pyarrow as pa
import pytest

import sbbf
from conftest import REPO, TESTDATA

ENV = {
    "AWS_ACCESS_KEY_ID": "sbbf-test-key",
    "AWS_SECRET_ACCESS_KEY": "sbbf-test-secret",
    "AWS_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
}


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    server = REPO / "tools" / ".venv" / "bin" / "moto_server"
    if not server.exists():
        pytest.fail(f"{server} is missing: bash tools/setup/setup-s3-test.sh")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "w")
    proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(endpoint, timeout=1)
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("moto_server did not start")
            time.sleep(0.2)
    saved = {k: os.environ.get(k) for k in [*ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(ENV, AWS_ENDPOINT_URL=endpoint)
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="bkt")
    for name in ("pa_ints.parquet", "duckdb_ints.parquet", "pa_temporal.parquet"):
        client.upload_file(str(TESTDATA / name), "bkt", f"t/{name}")
    yield endpoint
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def _cli(cli, url, column, values):
    p = subprocess.run([cli, "probe", "--format", "json", "--", url, column, *values],
                       capture_output=True, text=True, env=os.environ.copy())
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines()], p.stderr


def test_remote_probe_equals_cli(cli, s3):
    for url in ("s3://bkt/t/pa_ints.parquet", "s3://bkt/t/", "s3://bkt/t"):
        code, want, err = _cli(cli, url, "i64", ["42", "-752296985104395475"])
        assert want, err
        assert sbbf.probe(url, "i64", ["42", "-752296985104395475"]) == want, url
    got = sbbf.probe("s3://bkt/t/", "i64", [42])
    assert [o["file"] for o in got] == ["s3://bkt/t/duckdb_ints.parquet",
                                        "s3://bkt/t/pa_ints.parquet",
                                        "s3://bkt/t/pa_temporal.parquet"]
    assert got[2]["row_groups"] == []  # no column i64 there
    assert got[0]["row_groups"][0]["values"][0]["value"] == 42


def test_remote_errors(s3):
    with pytest.raises(sbbf.FileError):
        sbbf.probe("s3://bkt/nothing-here/", "i64", ["1"])
    with pytest.raises(sbbf.InputError, match="no file has column"):
        sbbf.probe("s3://bkt/t/", "nope", ["1"])


def test_remote_inspect_and_verify_equal_cli(cli, s3):
    for url in ("s3://bkt/t/pa_ints.parquet", "s3://bkt/t/"):
        p = subprocess.run([cli, "inspect", "--format", "json", url], capture_output=True,
                           text=True, env=os.environ.copy())
        assert p.returncode == 0, p.stderr
        want = [json.loads(line) for line in p.stdout.splitlines()]
        got = sbbf.inspect(url)
        assert (got if isinstance(got, list) else [got]) == want, url
    reports = sbbf.verify("s3://bkt/t/", "i64", samples=100)
    assert [r["file"] for r in reports] == ["s3://bkt/t/duckdb_ints.parquet",
                                            "s3://bkt/t/pa_ints.parquet",
                                            "s3://bkt/t/pa_temporal.parquet"]
    assert reports[2]["columns_not_in_file"] == ["i64"]
    assert all(r["false_negatives"] == 0 for r in reports)
    assert sum(len(r["chunks"]) for r in reports) > 0
    with pytest.raises(sbbf.FileError):
        sbbf.inspect("s3://bkt/nothing-here/")


def test_remote_read_table_prunes_and_reads_what_pyarrow_reads(s3):
    import pyarrow.parquet as pq

    local = pq.ParquetFile(TESTDATA / "pa_ints.parquet")
    v = local.read_row_group(1, columns=["i64"]).column(0)[0].as_py()
    filters = [("i64", "=", v)]
    url = "s3://bkt/t/pa_ints.parquet"
    got = sbbf.read_table(url, filters=filters)
    assert got.equals(pq.read_table(url, filters=filters))
    assert got.num_rows >= 1
    # The row groups it reads are the ones the library's store prunes to: fewer than all.
    keep = sbbf._source_keep(url, [[("i64", "=", v)]])

    class Frag:
        path = "bkt/t/pa_ints.parquet"

    kept = keep(Frag())
    assert kept is not None and 1 in kept and len(kept) < local.num_row_groups, kept
    # A prefix: every file, the one without the column kept whole.
    assert sbbf.read_table("s3://bkt/t/", filters=filters).equals(
        pq.read_table("s3://bkt/t/", filters=filters))


def test_a_delta_table_on_s3_reads_as_deltalake_reads_it(s3):
    """A Delta table under an S3 prefix: its snapshot's files and rows, at every version, as
    deltalake reads the same table from the local disk."""
    import boto3
    from deltalake import DeltaTable

    local = TESTDATA / "lake" / "delta_basic"
    client = boto3.client("s3", endpoint_url=s3, region_name="us-east-1")
    for path in local.rglob("*"):
        if path.is_file():
            client.upload_file(str(path), "bkt", f"lake/delta_basic/{path.relative_to(local)}")
    url = "s3://bkt/lake/delta_basic/"
    for v in range(DeltaTable(str(local)).version() + 1):
        theirs = DeltaTable(str(local), version=v).to_pyarrow_table()
        snap = sbbf.snapshot(url, as_of=v)
        assert snap["version"] == v
        assert sorted(f["path"].rsplit("/", 1)[1] for f in snap["files"]) == sorted(
            u.rsplit("/", 1)[1] for u in DeltaTable(str(local), version=v).file_uris())
        ours = sbbf.read_table(url, as_of=v, filters=[("id", ">=", 0)])
        assert sorted(ours.column("id").to_pylist()) == sorted(theirs.column("id").to_pylist())
    found = sbbf.row_groups(url, [("id", "=", 600)])
    assert len(found) == 1 and list(found.values())[0] == [0]


def test_a_remote_tables_files_are_pruned_whatever_their_names_hold(s3, tmp_path):
    """A Delta table on S3 whose partition folder names need escaping (`p=a b/`, percent-
    encoded in the log's URLs): the files its Bloom filters rule out are not read for rows
    (their data pages are spoiled on the store, their footers and filters kept), the file
    holding the key is."""
    import boto3
    from deltalake import DeltaTable, write_deltalake

    local = tmp_path / "t"
    for k, p in enumerate(["a b", "c%d", "plain"]):
        rows = pa.table({"id": pa.array(range(k * 100, k * 100 + 100), pa.int64()),
                         "p": [p] * 100})
        write_deltalake(str(local), rows, partition_by=["p"], mode="append")
    sbbf.add(str(local), "id")
    want = DeltaTable(str(local)).to_pyarrow_table(filters=[("id", "=", 150)])
    client = boto3.client("s3", endpoint_url=s3, region_name="us-east-1")
    holder = [f["path"] for f in sbbf.snapshot(local)["files"]
              if 100 <= sbbf.read_table(f["path"]).column("id")[0].as_py() < 200]
    assert len(holder) == 1
    for path in local.rglob("*"):
        if not path.is_file():
            continue
        body = path.read_bytes()
        if path.suffix == ".parquet" and str(path) != holder[0]:
            body = body[:4] + b"\xff" * 16 + body[20:]
        client.put_object(Bucket="bkt", Key=f"esc/{path.relative_to(local)}", Body=body)
    url = "s3://bkt/esc/"
    got = sbbf.read_table(url, filters=[("id", "=", 150)])
    assert got.column("id").to_pylist() == want.column("id").to_pylist() == [150]
    assert got.column("p").to_pylist() == ["c%d"]


def test_an_indexed_iceberg_table_on_s3_is_read_without_its_manifests(s3, tmp_path):
    """An Iceberg table on S3 whose index was built from its current snapshot: read_table
    takes the snapshot's files from the index, not from its manifest list and manifests
    (here deleted from the store after the build), and reads the rows pyiceberg reads;
    a read without the index needs them (and says they are missing)."""
    import boto3
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db",
                     warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("ns.t", schema=schema)
    for k in range(3):
        ids = list(range(k * 100, k * 100 + 100))
        t.append(pa.table({"id": ids, "s": [f"s{i}" for i in ids]}, schema=schema))
    want = t.scan(row_filter="id == 150").to_arrow()
    folder = Path(t.location().removeprefix("file://"))
    assert any(folder.rglob("*.parquet"))
    client = boto3.client("s3", endpoint_url=s3, region_name="us-east-1")
    for path in folder.rglob("*"):
        if path.is_file():
            client.upload_file(str(path), "bkt", f"ice/{path.relative_to(folder)}")
    url = "s3://bkt/ice/"
    sbbf.index_build(url, ["id"], build_missing=True)
    listed = client.list_objects_v2(Bucket="bkt", Prefix="ice/metadata/")["Contents"]
    avro = [o["Key"] for o in listed if o["Key"].endswith(".avro")]
    assert len(avro) >= 4
    for key in avro:
        client.delete_object(Bucket="bkt", Key=key)
    got = sbbf.read_table(url, filters=[("id", "=", 150)])
    assert got.column("id").to_pylist() == want.column("id").to_pylist() == [150]
    assert got.column("s").to_pylist() == ["s150"]
    with pytest.raises(Exception, match="storage does not have"):
        sbbf.snapshot(url)
