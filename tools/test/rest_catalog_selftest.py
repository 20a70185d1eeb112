"""End-to-end self-test of tools/test/rest_catalog.py, Python only (no cargo).

    tools/.venv/bin/python tools/test/rest_catalog_selftest.py [--keep]

Builds a pyiceberg SqlCatalog in a temporary directory (table ns.t with `id long`,
`s string`, two appends, and a table a.b.t2 in a two-level namespace), starts the
server as a subprocess with several flag sets, and drives it with urllib: config,
load, commits built by hand (set-properties, add-snapshot + set-snapshot-ref), a stale
`assert-ref-snapshot-id` (409), --unknown-once (504 then the change is there),
--conflict-once (409 after a real concurrent append), --prefix, --token, and a few
malformed requests (400/404). Exits 0 when every check passes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "rest_catalog.py")
CHECKS = 0


def check(cond: bool, what: str) -> None:
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1
    print(f"ok  {what}")


class Server:
    def __init__(self, db: str, warehouse: str, *flags: str, name: str = "default") -> None:
        cmd = [sys.executable, SERVER, "--catalog-db", db, "--catalog-name", name, "--warehouse", warehouse, *flags]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"server did not print PORT: {line!r}")
        self.port = int(line.split()[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                code, text = resp.status, resp.read()
                ctype = resp.headers.get("Content-Type")
        except urllib.error.HTTPError as e:
            code, text, ctype = e.code, e.read(), e.headers.get("Content-Type")
        if not text:
            return code, None
        assert ctype == "application/json", ctype
        return code, json.loads(text)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def table_path(ns: tuple[str, ...], name: str, prefix: str | None = None) -> str:
    ns_enc = "%1F".join(urllib.request.quote(level, safe="") for level in ns)
    pre = f"{prefix}/" if prefix else ""
    return f"/v1/{pre}namespaces/{ns_enc}/tables/{name}"


def base_requirements(tbl: Any, snapshot_id: int | None) -> list[dict[str, Any]]:
    return [
        {"type": "assert-table-uuid", "uuid": str(tbl.metadata.table_uuid)},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snapshot_id},
    ]


def rows(tbl: Any) -> list[tuple[Any, ...]]:
    t = tbl.scan().to_arrow()
    return sorted(zip(t.column("id").to_pylist(), t.column("s").to_pylist()))


def setup(tmp: str) -> tuple[str, str, SqlCatalog]:
    db = os.path.join(tmp, "catalog.db")
    wh = "file://" + os.path.join(tmp, "warehouse")
    os.makedirs(os.path.join(tmp, "warehouse"))
    cat = SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("ns")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
    t = cat.create_table(("ns", "t"), schema=schema)
    t.append(pa.table({"id": [1, 2], "s": ["a", "b"]}, schema=schema))
    t.append(pa.table({"id": [3], "s": ["c"]}, schema=schema))
    cat.create_namespace(("a", "b"))
    t2 = cat.create_table(("a", "b", "t2"), schema=schema)
    t2.append(pa.table({"id": [10], "s": ["x"]}, schema=schema))
    return db, wh, cat


def test_plain(db: str, wh: str, cat: SqlCatalog) -> None:
    srv = Server(db, wh)
    try:
        code, doc = srv.request("GET", "/v1/config")
        check(code == 200 and doc == {"defaults": {}, "overrides": {}}, "config without prefix")

        tbl = cat.load_table(("ns", "t"))
        code, doc = srv.request("GET", table_path(("ns",), "t"))
        check(code == 200 and doc["metadata-location"] == tbl.metadata_location, "load ns.t: metadata-location")
        check(doc["metadata"]["current-snapshot-id"] == tbl.metadata.current_snapshot_id
              and doc["metadata"]["table-uuid"] == str(tbl.metadata.table_uuid)
              and doc["config"] == {}, "load ns.t: metadata by alias")

        code, doc = srv.request("GET", table_path(("a", "b"), "t2"))
        check(code == 200 and doc["metadata"]["current-snapshot-id"]
              == cat.load_table(("a", "b", "t2")).metadata.current_snapshot_id, "load a.b.t2 (0x1F namespace)")
        code, _ = srv.request("HEAD", table_path(("ns",), "t"))
        check(code == 204, "HEAD existing table -> 204")

        code, doc = srv.request("GET", table_path(("ns",), "nope"))
        check(code == 404 and doc["error"]["type"] == "NoSuchTableException" and doc["error"]["code"] == 404,
              "load missing table -> 404 NoSuchTableException")
        code, doc = srv.request("GET", "/v1/whatever")
        check(code == 404 and "error" in doc, "unknown path -> 404")
        code, doc = srv.request("GET", table_path(("ns",), "t", prefix="p"))
        check(code == 404, "prefixed path without --prefix -> 404")

        # 1. set-properties with fresh requirements -> 200, visible in pyiceberg.
        snap = tbl.metadata.current_snapshot_id
        body = {
            "identifier": {"namespace": ["ns"], "name": "t"},
            "requirements": base_requirements(tbl, snap),
            "updates": [{"action": "set-properties", "updates": {"a": "b"}}],
        }
        code, doc = srv.request("POST", table_path(("ns",), "t"), body)
        check(code == 200 and doc["metadata"]["properties"].get("a") == "b", "set-properties commit -> 200")
        reloaded = cat.load_table(("ns", "t"))
        check(reloaded.properties.get("a") == "b" and reloaded.metadata_location == doc["metadata-location"],
              "property visible to pyiceberg, same metadata location")

        # 2. the same requirements after a concurrent append -> 409.
        reloaded.append(pa.table({"id": [4], "s": ["d"]}, schema=reloaded.schema().as_arrow()))
        body["updates"] = [{"action": "set-properties", "updates": {"a": "c"}}]
        code, doc = srv.request("POST", table_path(("ns",), "t"), body)
        check(code == 409 and doc["error"]["type"] == "CommitFailedException", "stale assert-ref-snapshot-id -> 409")
        print("    409 message:", doc["error"]["message"])
        check(cat.load_table(("ns", "t")).properties.get("a") == "b", "rejected commit left the table alone")

        # wrong table uuid -> 409
        tbl = cat.load_table(("ns", "t"))
        bad = {"requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
               "updates": [{"action": "set-properties", "updates": {"x": "y"}}]}
        code, doc = srv.request("POST", table_path(("ns",), "t"), bad)
        check(code == 409, "wrong assert-table-uuid -> 409")

        # 3. add-snapshot that reuses the current manifest list + set-snapshot-ref main.
        before_rows = rows(tbl)
        cur = tbl.metadata.current_snapshot()
        new_id = max(s.snapshot_id for s in tbl.metadata.snapshots) + 1000
        seq = tbl.metadata.last_sequence_number + 1
        add = {
            "requirements": base_requirements(tbl, cur.snapshot_id),
            "updates": [
                {"action": "add-snapshot", "snapshot": {
                    "snapshot-id": new_id,
                    "parent-snapshot-id": cur.snapshot_id,
                    "sequence-number": seq,
                    "timestamp-ms": int(time.time() * 1000),
                    "manifest-list": cur.manifest_list,
                    "summary": {"operation": "replace", "sbbf.test": "1"},
                    "schema-id": tbl.metadata.current_schema_id,
                }},
                {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": new_id},
            ],
        }
        code, doc = srv.request("POST", table_path(("ns",), "t"), add)
        check(code == 200 and doc["metadata"]["current-snapshot-id"] == new_id
              and doc["metadata"]["last-sequence-number"] == seq, "add-snapshot + set-snapshot-ref -> 200")
        after = cat.load_table(("ns", "t"))
        s = after.metadata.current_snapshot()
        check(s.snapshot_id == new_id and s.parent_snapshot_id == cur.snapshot_id and s.sequence_number == seq
              and s.summary.operation.value == "replace" and s.summary["sbbf.test"] == "1",
              "pyiceberg sees the new snapshot, parent, sequence number and summary")
        check(rows(after) == before_rows, f"pyiceberg reads the same rows {before_rows}")

        # add-snapshot replayed (same id) -> 400 (ValueError from pyiceberg).
        add["requirements"] = base_requirements(after, new_id)
        code, doc = srv.request("POST", table_path(("ns",), "t"), add)
        check(code == 400, "add-snapshot with an existing id -> 400")
        print("    400 message:", doc["error"]["message"])

        # add-snapshot with a stale sequence number -> 400.
        stale = json.loads(json.dumps(add))
        stale["updates"][0]["snapshot"]["snapshot-id"] = new_id + 1
        stale["updates"][0]["snapshot"]["parent-snapshot-id"] = new_id
        stale["updates"][0]["snapshot"]["sequence-number"] = seq
        stale["updates"][1]["snapshot-id"] = new_id + 1
        code, doc = srv.request("POST", table_path(("ns",), "t"), stale)
        check(code == 400, "add-snapshot with sequence-number <= last-sequence-number -> 400")
        print("    400 message:", doc["error"]["message"])

        # set-snapshot-ref to an unknown snapshot -> 400.
        code, doc = srv.request("POST", table_path(("ns",), "t"), {
            "requirements": [], "updates": [
                {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 42}]})
        check(code == 400, "set-snapshot-ref to an unknown snapshot -> 400")

        # malformed bodies -> 400, commit to a missing table -> 404.
        code, doc = srv.request("POST", table_path(("ns",), "t"), raw=b"{not json")
        check(code == 400 and doc["error"]["code"] == 400, "unparsable JSON -> 400")
        code, doc = srv.request("POST", table_path(("ns",), "t"), {"updates": [{"action": "no-such-action"}]})
        check(code == 400, "unknown update action -> 400")
        code, doc = srv.request("POST", table_path(("ns",), "t"), {
            "updates": [{"action": "add-snapshot", "snapshot": {"snapshot-id": 1}}]})
        check(code == 400, "add-snapshot without manifest-list -> 400")
        code, doc = srv.request("POST", table_path(("ns",), "t"), {"requirements": [{"type": "assert-what"}]})
        check(code == 400, "unknown requirement type -> 400")
        code, doc = srv.request("POST", table_path(("ns",), "nope"), {"requirements": [], "updates": []})
        check(code == 404 and doc["error"]["type"] == "NoSuchTableException", "commit to a missing table -> 404")

        code, doc = srv.request("GET", "/test/commits")
        check(code == 200 and doc == {"commits": 12, "applied": 2}, f"/test/commits counts {doc}")
    finally:
        srv.stop()


def test_prefix_token_unknown(db: str, wh: str, cat: SqlCatalog) -> None:
    srv = Server(db, wh, "--prefix", "cat1", "--token", "sekrit", "--unknown-once")
    try:
        code, doc = srv.request("GET", "/v1/config")
        check(code == 401 and doc["error"]["type"] == "NotAuthorizedException", "no token -> 401")
        code, doc = srv.request("GET", "/v1/config", token="wrong")
        check(code == 401, "wrong token -> 401")
        code, doc = srv.request("GET", "/v1/config", token="sekrit")
        check(code == 200 and doc == {"defaults": {}, "overrides": {"prefix": "cat1"}}, "config with prefix")
        code, doc = srv.request("GET", table_path(("ns",), "t"), token="sekrit")
        check(code == 404, "unprefixed table path with --prefix -> 404")
        code, doc = srv.request("GET", table_path(("ns",), "t", prefix="cat1"), token="sekrit")
        check(code == 200, "prefixed table path -> 200")

        tbl = cat.load_table(("ns", "t"))
        body = {"requirements": base_requirements(tbl, tbl.metadata.current_snapshot_id),
                "updates": [{"action": "set-properties", "updates": {"unknown": "1"}}]}
        code, doc = srv.request("POST", table_path(("ns",), "t", prefix="cat1"), body)
        check(code == 401, "commit without token -> 401")
        code, doc = srv.request("POST", table_path(("ns",), "t", prefix="cat1"), body, token="sekrit")
        check(code == 504 and doc["error"]["code"] == 504, "--unknown-once: first commit -> 504")
        check(cat.load_table(("ns", "t")).properties.get("unknown") == "1", "--unknown-once: the change is there")
        body["requirements"] = base_requirements(tbl, tbl.metadata.current_snapshot_id)
        body["updates"] = [{"action": "set-properties", "updates": {"unknown": "2"}}]
        code, doc = srv.request("POST", table_path(("ns",), "t", prefix="cat1"), body, token="sekrit")
        check(code == 200 and cat.load_table(("ns", "t")).properties.get("unknown") == "2",
              "--unknown-once: second commit -> 200")
        code, doc = srv.request("GET", "/test/commits")
        check(doc == {"commits": 2, "applied": 2}, f"/test/commits counts {doc}")
    finally:
        srv.stop()


def test_conflict(db: str, wh: str, cat: SqlCatalog) -> None:
    srv = Server(db, wh, "--conflict-once")
    try:
        tbl = cat.load_table(("ns", "t"))
        n_before = tbl.scan().to_arrow().num_rows
        snap = tbl.metadata.current_snapshot_id
        body = {"requirements": base_requirements(tbl, snap),
                "updates": [{"action": "set-properties", "updates": {"conflict": "1"}}]}
        code, doc = srv.request("POST", table_path(("ns",), "t"), body)
        check(code == 409, "--conflict-once: first commit -> 409")
        print("    409 message:", doc["error"]["message"])
        now = cat.load_table(("ns", "t"))
        check(now.metadata.current_snapshot_id != snap and now.scan().to_arrow().num_rows == n_before + 1
              and "conflict" not in now.properties, "--conflict-once: one row appended, the request not applied")
        code, doc = srv.request("GET", "/test/conflict")
        check(doc == {"rows": 1, "snapshot-id": now.metadata.current_snapshot_id}, f"/test/conflict {doc}")
        body["requirements"] = base_requirements(now, now.metadata.current_snapshot_id)
        code, doc = srv.request("POST", table_path(("ns",), "t"), body)
        check(code == 200 and cat.load_table(("ns", "t")).properties.get("conflict") == "1",
              "--conflict-once: retry on the new snapshot -> 200")
        code, doc = srv.request("GET", "/test/commits")
        check(doc == {"commits": 2, "applied": 1}, f"/test/commits counts {doc}")
    finally:
        srv.stop()


def test_stdin_eof(db: str, wh: str) -> None:
    srv = Server(db, wh, "--exit-on-stdin-eof")
    srv.proc.stdin.close()
    try:
        rc = srv.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        srv.stop()
        rc = None
    check(rc == 0, "--exit-on-stdin-eof: exits 0 when stdin closes")


def main() -> int:
    keep = "--keep" in sys.argv
    tmp = tempfile.mkdtemp(prefix="rest_catalog_selftest_")
    try:
        db, wh, cat = setup(tmp)
        test_plain(db, wh, cat)
        test_prefix_token_unknown(db, wh, cat)
        test_conflict(db, wh, cat)
        test_stdin_eof(db, wh)
    finally:
        if keep:
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"all {CHECKS} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
