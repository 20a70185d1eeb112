"""Shared paths for the tests of the Python package `sbbf`: the repository, its corpora, and
the `sbbf` command (the answers the package must equal). A missing command fails the run."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"
EXPECTED = REPO / "fixtures" / "expected"
# testdata/ and its conformance corpus, each with the expectation files naming its columns and
# values (written by other implementations' readers, see tools/gen/README.md).
CORPORA = [
    (TESTDATA, EXPECTED),
    (TESTDATA / "conformance", REPO / "fixtures" / "conformance" / "expected"),
]
# tools/python/test.sh sets SBBF_CLI; else cargo's target directory (CARGO_TARGET_DIR, relative
# to the repository when not absolute, or target/).
CLI = pathlib.Path(
    os.environ.get("SBBF_CLI")
    or REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "debug" / "sbbf"
)


@pytest.fixture(scope="session")
def cli() -> str:
    if not CLI.is_file():
        pytest.fail(f"the sbbf command is not at {CLI} (cargo build -p sbbf-cli, or set SBBF_CLI)")
    return str(CLI)


def corpus_files():
    files = sorted(TESTDATA.glob("*.parquet"))
    assert len(files) >= 20, files
    return files
