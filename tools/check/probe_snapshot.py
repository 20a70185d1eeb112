#!/usr/bin/env python3
"""Every probe answer of the corpora, as `sbbf probe --format json` gives it: run before and
after a refactor and diff the two outputs (they must be identical).

    python3 tools/check/probe_snapshot.py target/debug/sbbf > before.jsonl
    ... change the code, rebuild ...
    python3 tools/check/probe_snapshot.py target/debug/sbbf > after.jsonl
    diff before.jsonl after.jsonl && echo identical

For each file of testdata/ and testdata/conformance/ with an expectation file, every column
named there is probed with every value text named there (present and absent values, edge
values), once in the default (SQL) mode and once with --exact-bits, plus a few texts that
exercise the reader's rules (out of range, finer than the unit, bad text).
"""
import gzip
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAIRS = [
    (ROOT / "testdata", ROOT / "fixtures/expected"),
    (ROOT / "testdata/conformance", ROOT / "fixtures/conformance/expected"),
]
# Texts that hit the reader's rules rather than stored values.
EXTRA = ["0", "-1", "300", "70000", "4294967296", "18446744073709551616", "1.5", "-0.0",
         "NaN", "inf", "12.345", "1e3", "2024-02-29", "2024-01-31T12:00:00.123456789Z",
         "2024-01-31T12:00:00.1234567891", "23:59:59.999999999", "0x00ff", "",
         "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "not a value"]


def main():
    sbbf = sys.argv[1]
    for files, expected in PAIRS:
        for exp in sorted(expected.glob("*.jsonl.gz")):
            cols = {}
            fname = None
            with gzip.open(exp, "rt") as f:
                for line in f:
                    j = json.loads(line)
                    if j.get("column") is None:
                        continue
                    fname = j["file"]
                    vals = cols.setdefault(j["column"], [])
                    if j["value"] not in vals:
                        vals.append(j["value"])
            if fname is None or not (files / fname).exists():
                continue
            for col, vals in sorted(cols.items()):
                texts = [v for v in vals if "\n" not in v]
                runs = [(mode, texts) for mode in ([], ["--exact-bits"])]
                # A text that does not parse fails the whole call: one call per extra text.
                runs += [([], [t]) for t in EXTRA]
                for mode, batch in runs:
                    p = subprocess.run(
                        [sbbf, "probe", *mode, "--format", "json", "--values-from", "-",
                         "--", str(files / fname), col],
                        input="\n".join(batch) + "\n", capture_output=True, text=True)
                    # One record per call: what came out and how it ended.
                    print(json.dumps({"file": fname, "column": col, "mode": mode,
                                      "values": batch if len(batch) == 1 else len(batch),
                                      "exit": p.returncode, "stdout": p.stdout,
                                      "stderr": p.stderr.strip()}, sort_keys=True))


if __name__ == "__main__":
    main()
