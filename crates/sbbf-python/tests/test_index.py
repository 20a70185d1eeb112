"""The table index from Python: `sbbf.index_build`, `index_update`, `index_inspect`, and
`sbbf.probe` on a table root answering from the index exactly as a probe of every file does
(`index=False`, and the command's `--no-index`), through changed files and a damaged index."""
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sbbf


def _table(root, files=12, rows=400):
    root.mkdir(exist_ok=True)
    for i in range(files):
        ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
        names = pa.array([f"n{v}" for v in range(i * rows, (i + 1) * rows)])
        sub = root / f"part={i % 3}"
        sub.mkdir(exist_ok=True)
        pq.write_table(pa.table({"id": ids, "name": names}), sub / f"f{i:02}.parquet",
                       row_group_size=200,
                       bloom_filter_options={"id": {"ndv": 200, "fpp": 0.01},
                                             "name": {"ndv": 200, "fpp": 0.01}})
    # Files changed in the 2 s before a build are left out of it (they may still be being
    # written), and a change time cannot be set back: wait it out.
    time.sleep(2.1)


def _cli_no_index(cli, root, column, values):
    p = subprocess.run([cli, "probe", "--no-index", "--format", "json", "--", str(root), column,
                        *values], capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def _holding(root, column, value):
    """(file, row group) pairs that hold `value`, read with pyarrow."""
    out = set()
    for path in sorted(root.rglob("*.parquet")):
        f = pq.ParquetFile(path)
        for rg in range(f.num_row_groups):
            if value in f.read_row_group(rg, columns=[column]).column(0).to_pylist():
                out.add((str(path), rg))
    return out


def _maybe(objs):
    return {(o["file"], rg["row_group"]) for o in objs for rg in o["row_groups"]
            if any(v["result"] != "absent" for v in rg["values"])}


def test_probe_from_the_index_equals_a_probe_of_every_file(cli, tmp_path):
    root = tmp_path / "t"
    _table(root)
    report = sbbf.index_build(root)
    assert report["files"] == 12 and os.path.isdir(root / "_sbbf_index"), report
    cov = sbbf.index_inspect(root)
    assert cov["covered"] == 12 and report.get("racy", 0) == 0, (cov, report)
    # The index answers: a value no file holds needs no file opened (the probe's objects are
    # the same either way; the command's --stats counts what the index answered).
    p = subprocess.run([cli, "probe", "--stats", str(root), "id", "-1"], capture_output=True,
                       text=True)
    assert "index: 12 of 12 file(s) answered by the index" in p.stdout, p.stdout
    for column, values in (("id", ["4242", "-1", "99999"]), ("name", ["n17", "zzz"])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = sbbf.probe(root, column, values)
        assert got == sbbf.probe(root, column, values, index=False)
        assert got == _cli_no_index(cli, root, column, values)
    # No false negative: every row group holding the value is maybe.
    assert _holding(root, "id", 4242) <= _maybe(sbbf.probe(root, "id", [4242]))
    # The index is not data: pyarrow reads the same rows beside it.
    assert pq.read_table(root).num_rows == 12 * 400


def test_changed_and_new_files_and_a_damaged_index_answer_as_direct_probes(cli, tmp_path):
    root = tmp_path / "t"
    _table(root, files=6)
    sbbf.index_build(root)
    # A file rewritten with other values (and another size), and a new file.
    changed = root / "part=0" / "f00.parquet"
    pq.write_table(pa.table({"id": pa.array([777_777, 1], pa.int64()),
                             "name": pa.array(["x", "y"])}), changed,
                   bloom_filter_options={"id": {"ndv": 10, "fpp": 0.01}})
    pq.write_table(pa.table({"id": pa.array([888_888], pa.int64()), "name": pa.array(["z"])}),
                   root / "part=1" / "new.parquet",
                   bloom_filter_options={"id": {"ndv": 10, "fpp": 0.01}})
    for v in ("777777", "888888", "5"):
        got = sbbf.probe(root, "id", [v])
        assert got == _cli_no_index(cli, root, "id", [v]), v
    assert _holding(root, "id", 777_777) <= _maybe(sbbf.probe(root, "id", [777_777]))
    assert _holding(root, "id", 888_888) <= _maybe(sbbf.probe(root, "id", [888_888]))
    cov = sbbf.index_inspect(root)
    assert cov["covered"] == 5, cov
    time.sleep(2.1)  # files changed in the 2 s before an update are left for the next one
    up = sbbf.index_update(root)
    assert sbbf.index_inspect(root)["covered"] == 7, up
    assert sbbf.probe(root, "id", ["888888"]) == _cli_no_index(cli, root, "id", ["888888"])
    # Tear every index file (a write cut short): the probe warns once and answers as
    # without the index.
    for f in (root / "_sbbf_index").iterdir():
        f.write_bytes(f.read_bytes()[:-10])
    with pytest.warns(UserWarning, match="ignoring the index"):
        got = sbbf.probe(root, "id", ["777777"])
    assert got == _cli_no_index(cli, root, "id", ["777777"])


def test_index_errors(tmp_path):
    with pytest.raises(sbbf.InputError, match="not a table root"):
        sbbf.index_build(tmp_path / "missing.parquet")
    _table(tmp_path / "t", files=1)
    with pytest.raises(sbbf.FileError, match="no index"):
        sbbf.index_inspect(tmp_path / "t")
    with pytest.raises(sbbf.InputError, match=r"^[^:]*/empty: no \*\.parquet"):
        (tmp_path / "empty").mkdir()
        sbbf.index_inspect(tmp_path / "empty")
    # A misspelt column refuses the build and leaves the index as it was.
    sbbf.index_build(tmp_path / "t")
    index = tmp_path / "t" / "_sbbf_index" / "index.sbbfi"
    good = index.read_bytes()
    with pytest.raises(sbbf.InputError, match="did you mean `id`"):
        sbbf.index_build(tmp_path / "t", ["idd"])
    assert index.read_bytes() == good


def test_a_tightened_index_rules_out_what_loose_filters_cannot(tmp_path):
    # Filters sized for 8 values over 400 distinct ids: nearly every bit set.
    root = tmp_path / "t"
    root.mkdir()
    for i in range(6):
        ids = pa.array(range(i * 400, (i + 1) * 400), pa.int64())
        pq.write_table(pa.table({"id": ids}), root / f"f{i}.parquet",
                       bloom_filter_options={"id": {"ndv": 8, "fpp": 0.2}})
    time.sleep(2.1)
    with pytest.raises(sbbf.InputError, match="tighten=True needs"):
        sbbf.index_build(root, "id", tighten=True)
    loose = sbbf.index_build(root, "id")
    assert loose["filters_tightened"] == 0
    absent = 10_000_000
    ruled_loose = sum(1 for o in sbbf.probe(root, "id", [absent])
                      if all(v["result"] == "absent" for rg in o["row_groups"] for v in rg["values"]))
    report = sbbf.index_build(root, "id", fpp=0.0001, tighten=True)
    assert report["filters_tightened"] == 6, report
    ruled = sum(1 for o in sbbf.probe(root, "id", [absent])
                if all(v["result"] == "absent" for rg in o["row_groups"] for v in rg["values"]))
    assert ruled == 6 and ruled_loose < 6, (ruled, ruled_loose)
    # Every stored id is still found in its file.
    for i in range(6):
        for v in range(i * 400, (i + 1) * 400, 37):
            files = {Path(o["file"]).name for o in sbbf.probe(root, "id", [v])
                     if any(x["result"] != "absent" for rg in o["row_groups"] for x in rg["values"])}
            assert f"f{i}.parquet" in files, (v, files)


def test_row_groups_and_read_table_leave_out_what_the_index_rules_out(tmp_path):
    root = tmp_path / "t"
    _table(root)
    sbbf.index_build(root)
    filters = [("id", "=", 4242)]
    got = sbbf.row_groups(root, filters)
    assert got == sbbf.row_groups(root, filters, index=False)
    holder = str(root / "part=1" / "f10.parquet")
    assert got[holder], got
    out = [f for f, rgs in got.items() if not rgs]
    assert len(out) >= 8, got  # 12 files, one holds the value, few false positives at 1 %
    # A file rewritten with its size and modification time kept (as `cp -p` or `touch -r`
    # leave it) is never answered from the index: its change time tells, so it is read.
    victim = Path(out[0])
    st = victim.stat()
    data = bytearray(victim.read_bytes())
    data[-4:] = b"XXXX"  # no longer ends with PAR1
    victim.write_bytes(bytes(data))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert victim.stat().st_size == st.st_size and victim.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(sbbf.FileError):
        sbbf.row_groups(root, filters)
    with pytest.raises(sbbf.FileError):
        sbbf.row_groups(root, filters, index=False)
    # read_table beside the index: pyarrow's rows (the spoiled file is not read for them).
    os.remove(victim)
    sbbf.index_update(root)
    want = pq.read_table(root, filters=filters)
    assert sbbf.read_table(root, filters=filters).equals(want) and want.num_rows == 1


def test_add_on_a_lake_table_keeps_its_index(tmp_path):
    """`sbbf.add` on a Delta table swaps files for copies; the table's index follows in the
    same call, so an update after it has nothing to read and every file is still covered."""
    import shutil
    table = tmp_path / "delta_checkpoint"
    shutil.copytree(Path(__file__).resolve().parents[3] / "testdata" / "lake" / "delta_checkpoint",
                    table)
    time.sleep(2.1)
    built = sbbf.index_build(table, ["id"])
    assert built["files"] == 14
    sbbf.add(table, ["s"])
    up = sbbf.index_update(table)
    assert (up["files_read"], up["files_kept"], up["table_version"]) == (0, 14, 14), up
    # A value in a swapped file: the same answers with the index as without it.
    with_index = sbbf.probe(table, "id", [650])
    without = sbbf.probe(table, "id", [650], index=False)
    assert with_index == without
    assert sum("maybe" in json.dumps(a) for a in with_index) == 1
