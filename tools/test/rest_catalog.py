"""A small Iceberg REST catalog in front of a pyiceberg SqlCatalog, for integration tests.

The Rust integration tests start it as an oracle: it answers the few endpoints of the
Iceberg REST specification that a table committer needs, and leaves every decision
about requirements and updates to pyiceberg, so a commit it accepts is one pyiceberg
itself would accept.

Run it with the tools venv (pyiceberg 0.12, pydantic, pyarrow):

    tools/.venv/bin/python tools/test/rest_catalog.py --catalog-db /tmp/x/catalog.db \
        [--catalog-name default] [--warehouse file:///tmp/x/wh] [--prefix P] \
        [--conflict-once] [--unknown-once] [--applied-conflict-once] [--token T] [--exit-on-stdin-eof]

The catalog (a SQLite file written by pyiceberg's SqlCatalog, opened as
`SqlCatalog(NAME, uri="sqlite:///PATH", warehouse=URI)`) and its tables must exist
already. The server binds 127.0.0.1 on a free port, prints one line `PORT <n>` on
stdout, then serves until it is killed (or, with --exit-on-stdin-eof, until its stdin
is closed). Each request is logged on stderr as `METHOD PATH STATUS`.

Endpoints (JSON bodies; errors are `{"error": {"message", "type", "code"}}`):

    GET  /v1/config                                  {"defaults": {}, "overrides": {"prefix": P}}
                                                     (overrides empty without --prefix)
    GET  /v1/[P/]namespaces/{ns}/tables/{table}      LoadTableResult; 404 when absent
    HEAD /v1/[P/]namespaces/{ns}/tables/{table}      204, or 404 when absent
    POST /v1/[P/]namespaces/{ns}/tables/{table}      CommitTableRequest -> CommitTableResponse
    GET  /test/commits                               {"commits": n, "applied": m}
    GET  /test/conflict                              {"rows": k, "snapshot-id": id or null}

`{ns}` is the namespace levels joined by the unit separator 0x1F (sent as %1F). With
--prefix the table paths must carry the prefix, without it they must not. Commits are
parsed with pyiceberg's own pydantic unions (TableRequirement, TableUpdate) and applied
with `SqlCatalog.commit_table`: CommitFailedException -> 409, an unparsable body or a
ValueError/ValidationError -> 400, NoSuchTableError -> 404, anything else -> 500.

Test hooks:
  --conflict-once  on the first commit POST, before applying it, append one row to the
                   table with pyiceberg (a copy of its first row, or a row of nulls when
                   the table is empty), so an `assert-ref-snapshot-id` requirement of
                   the request fails with 409. The row count and new snapshot id go to
                   stderr (`CONFLICT ...`) and to GET /test/conflict.
  --unknown-once   on the first commit POST, apply it, then answer 504 (commit state
                   unknown) instead of 200.
  --applied-conflict-once  on the first commit POST, apply it, then answer 409, as a
                   proxy that sent the request again after the first one was applied
                   would see it.
  --token T        every /v1 request must carry `Authorization: Bearer T`, else 401.
                   The /test endpoints answer with or without it.

`commits` counts commit POSTs to a table path that passed the token check (parsable or
not); `applied` counts those that pyiceberg committed (the one answered 504 by
--unknown-once included).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pyarrow as pa
from pydantic import TypeAdapter, ValidationError
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError
from pyiceberg.table.update import TableRequirement, TableUpdate

REQUIREMENTS = TypeAdapter(tuple[TableRequirement, ...])
UPDATES = TypeAdapter(tuple[TableUpdate, ...])


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class HttpError(Exception):
    """An answer other than 200, carried as an exception up to the handler."""

    def __init__(self, code: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind
        self.message = message


class State:
    """Everything the handlers share; `lock` makes requests run one at a time."""

    def __init__(self, args: argparse.Namespace) -> None:
        props = {"uri": f"sqlite:///{args.catalog_db}"}
        if args.warehouse:
            props["warehouse"] = args.warehouse
        self.catalog = SqlCatalog(args.catalog_name, **props)
        self.prefix: str | None = args.prefix
        self.token: str | None = args.token
        self.conflict_pending: bool = args.conflict_once
        self.unknown_pending: bool = args.unknown_once
        self.applied_conflict_pending: bool = args.applied_conflict_once
        self.commits = 0
        self.applied = 0
        self.conflict_rows = 0
        self.conflict_snapshot: int | None = None
        self.lock = threading.Lock()


def metadata_json(metadata: Any) -> Any:
    # IcebergBaseModel dumps by alias and without None fields by default.
    return json.loads(metadata.model_dump_json())


def one_row_like(table: Any) -> pa.Table:
    """One row for `table`: a copy of its first row, or nulls when it has none."""
    current = table.scan(limit=1).to_arrow()
    if current.num_rows > 0:
        return current.slice(0, 1)
    schema = table.schema().as_arrow()
    return pa.Table.from_arrays([pa.nulls(1, type=f.type) for f in schema], schema=schema)


def make_conflict(state: State, ident: tuple[str, ...]) -> None:
    table = state.catalog.load_table(ident)
    before = table.metadata.current_snapshot_id
    row = one_row_like(table)
    table.append(row)
    after = table.metadata.current_snapshot_id
    state.conflict_rows += row.num_rows
    state.conflict_snapshot = after
    log(
        f"CONFLICT appended {row.num_rows} row(s) to {'.'.join(ident)}: "
        f"snapshot {before} -> {after}"
    )


def split_table_path(state: State, path: str) -> tuple[str, ...] | None:
    """The table identifier of /v1/[P/]namespaces/{ns}/tables/{table}, else None."""
    if not path.startswith("/v1/"):
        return None
    rest = path[len("/v1/"):]
    if state.prefix is not None:
        for spelled in {state.prefix, quote(state.prefix, safe="")}:
            if rest.startswith(spelled + "/"):
                rest = rest[len(spelled) + 1:]
                break
        else:
            return None
    parts = rest.split("/")
    if len(parts) != 4 or parts[0] != "namespaces" or parts[2] != "tables":
        return None
    levels = unquote(parts[1]).split("\x1f")
    name = unquote(parts[3])
    if not name or any(not level for level in levels):
        return None
    return tuple(levels) + (name,)


def load(state: State, ident: tuple[str, ...]) -> Any:
    try:
        return state.catalog.load_table(ident)
    except NoSuchTableError as e:
        raise HttpError(404, "NoSuchTableException", f"Table does not exist: {'.'.join(ident)} ({e})") from e


def parse_commit(body: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HttpError(400, "BadRequestException", f"Malformed JSON body: {e}") from e
    if not isinstance(doc, dict):
        raise HttpError(400, "BadRequestException", "Commit body must be a JSON object")
    try:
        requirements = REQUIREMENTS.validate_python(doc.get("requirements") or [])
        updates = UPDATES.validate_python(doc.get("updates") or [])
    except ValidationError as e:
        raise HttpError(400, "BadRequestException", f"Invalid commit request: {e}") from e
    return requirements, updates


def commit(state: State, ident: tuple[str, ...], body: bytes) -> tuple[int, Any]:
    state.commits += 1
    requirements, updates = parse_commit(body)
    table = load(state, ident)
    if state.conflict_pending:
        state.conflict_pending = False
        make_conflict(state, ident)
    try:
        response = state.catalog.commit_table(table, requirements, updates)
    except CommitFailedException as e:
        raise HttpError(409, "CommitFailedException", str(e)) from e
    except NoSuchTableError as e:
        raise HttpError(404, "NoSuchTableException", str(e)) from e
    except ValueError as e:  # pydantic's ValidationError is one too
        raise HttpError(400, "BadRequestException", f"{type(e).__name__}: {e}") from e
    state.applied += 1
    if state.unknown_pending:
        state.unknown_pending = False
        log(f"UNKNOWN commit to {'.'.join(ident)} applied ({response.metadata_location}), answering 504")
        raise HttpError(504, "CommitStateUnknownException", "Gateway timeout (the commit was applied)")
    if state.applied_conflict_pending:
        state.applied_conflict_pending = False
        log(f"APPLIED-CONFLICT commit to {'.'.join(ident)} applied ({response.metadata_location}), answering 409")
        raise HttpError(409, "CommitFailedException", "Requirement failed (the commit was applied by an earlier send)")
    return 200, {
        "metadata-location": response.metadata_location,
        "metadata": metadata_json(response.metadata),
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "rest-catalog-oracle/1"
    state: State  # set on the class before serving

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # one line per request is written by handle_any

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_json(self, code: int, doc: Any, head_only: bool = False) -> None:
        data = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(code)
        if doc is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head_only:
            self.wfile.write(data)
        self.wfile.flush()

    def route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        state = self.state
        if path.startswith("/test/"):
            if method == "GET" and path == "/test/commits":
                return 200, {"commits": state.commits, "applied": state.applied}
            if method == "GET" and path == "/test/conflict":
                return 200, {"rows": state.conflict_rows, "snapshot-id": state.conflict_snapshot}
            raise HttpError(404, "NotFoundException", f"No route for {method} {path}")
        if state.token is not None:
            if self.headers.get("Authorization", "") != f"Bearer {state.token}":
                raise HttpError(401, "NotAuthorizedException", "Missing or wrong bearer token")
        if method == "GET" and path == "/v1/config":
            overrides = {} if state.prefix is None else {"prefix": state.prefix}
            return 200, {"defaults": {}, "overrides": overrides}
        ident = split_table_path(state, path)
        if ident is None:
            raise HttpError(404, "NotFoundException", f"No route for {method} {path}")
        if method == "GET":
            table = load(state, ident)
            return 200, {
                "metadata-location": table.metadata_location,
                "metadata": metadata_json(table.metadata),
                "config": {},
            }
        if method == "HEAD":
            load(state, ident)
            return 204, None
        if method == "POST":
            return commit(state, ident, body)
        raise HttpError(404, "NotFoundException", f"No route for {method} {path}")

    def handle_any(self, method: str) -> None:
        path = urlsplit(self.path).path
        try:
            body = self.read_body()
        except (ValueError, OSError) as e:
            self.close_connection = True
            code, doc = 400, {"error": {"message": f"Unreadable body: {e}", "type": "BadRequestException", "code": 400}}
        else:
            with self.state.lock:
                try:
                    code, doc = self.route(method, path, body)
                except HttpError as e:
                    code, doc = e.code, {"error": {"message": e.message, "type": e.kind, "code": e.code}}
                except Exception as e:  # noqa: BLE001 - every other failure is a 500 with its message
                    traceback.print_exc(file=sys.stderr)
                    msg = f"{type(e).__name__}: {e}"
                    code, doc = 500, {"error": {"message": msg, "type": "InternalServerError", "code": 500}}
        log(f"{method} {self.path} {code}")
        if method == "HEAD" and doc is not None:
            self.send_json(code, doc, head_only=True)
        else:
            self.send_json(code, doc)

    def do_GET(self) -> None:  # noqa: N802
        self.handle_any("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self.handle_any("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        self.handle_any("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self.handle_any("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self.handle_any("DELETE")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--catalog-db", required=True, help="SQLite file of the pyiceberg SqlCatalog")
    p.add_argument("--catalog-name", default="default")
    p.add_argument("--warehouse", default=None, help="warehouse URI given to SqlCatalog")
    p.add_argument("--prefix", default=None, help="prefix announced by /v1/config and required in table paths")
    p.add_argument("--conflict-once", action="store_true")
    p.add_argument("--unknown-once", action="store_true")
    p.add_argument("--applied-conflict-once", action="store_true")
    p.add_argument("--token", default=None)
    p.add_argument("--exit-on-stdin-eof", action="store_true", help="stop when stdin is closed")
    args = p.parse_args(argv)

    Handler.state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    log(f"serving catalog {args.catalog_name!r} of {args.catalog_db} on 127.0.0.1:{server.server_address[1]}")

    if args.exit_on_stdin_eof:
        def watch_stdin() -> None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            log("stdin closed, exiting")
            os._exit(0)

        threading.Thread(target=watch_stdin, daemon=True).start()

    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
