"""Shared helpers for tools/gen: paths, canonical value text <-> plain bytes, random values.

The canonical value text follows fixtures/conformance/README.md ("Canonical value text"):
it is what a CLI user types, and `plain_hex` is what gets hashed.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import random
import struct
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"
EXPECTED = ROOT / "fixtures" / "expected"
BUILD = Path(os.environ.get("SBBF_GEN_BUILD", "/tmp/sbbf-gen-build"))


def target_dir() -> Path:
    """Cargo's target directory, where the binaries it built are: $SBBF_TARGET_DIR when a
    script already asked (tools/target-dir.sh), else cargo's own answer (CARGO_TARGET_DIR, a
    config's build.target-dir, else ROOT/target)."""
    known = os.environ.get("SBBF_TARGET_DIR")
    if known:
        return Path(known)
    import json
    import subprocess

    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return Path(json.loads(meta)["target_directory"])


ORACLE_BIN = target_dir() / "release" / "arrowrs-oracle"

EPOCH = _dt.date(1970, 1, 1)
JULIAN_EPOCH = 2440588  # Julian day number of 1970-01-01
UNIT_PER_SEC = {"MILLIS": 10**3, "MICROS": 10**6, "NANOS": 10**9}
FRAC_DIGITS = {"MILLIS": 3, "MICROS": 6, "NANOS": 9}

F32_NAN = bytes.fromhex("0000c07f")
F64_NAN = bytes.fromhex("000000000000f87f")
F16_NAN = bytes.fromhex("007e")


def seed_of(*parts) -> int:
    """A stable seed from strings/ints (Python's hash() is salted per process)."""
    return zlib.crc32("\x1f".join(map(str, parts)).encode())


def rng_for(*parts) -> random.Random:
    return random.Random(seed_of(*parts))


# ----------------------------------------------------------------------------- logical types

def parse_logical(lt: str):
    """'INT(8,true)' -> ('INT', ['8', 'true']); 'STRING' -> ('STRING', [])."""
    if "(" in lt:
        name, rest = lt.split("(", 1)
        return name, rest.rstrip(")").split(",")
    return lt, []


def int_domain(physical: str, logical: str):
    """(bits, signed) for integer-valued INT32/INT64 columns."""
    name, args = parse_logical(logical)
    if name == "INT":
        return int(args[0]), args[1] == "true"
    return (32 if physical == "INT32" else 64), True


# ----------------------------------------------------------------------------- formatting

def _days_to_date(days: int) -> _dt.date:
    return EPOCH + _dt.timedelta(days=days)


def fmt_ticks(ticks: int, unit: str, with_date: bool) -> str:
    per = UNIT_PER_SEC[unit]
    secs, frac = divmod(ticks, per)
    days, sod = divmod(secs, 86400)
    hh, rem = divmod(sod, 3600)
    mm, ss = divmod(rem, 60)
    t = f"{hh:02d}:{mm:02d}:{ss:02d}.{frac:0{FRAC_DIGITS[unit]}d}"
    if with_date:
        return f"{_days_to_date(days).isoformat()}T{t}"
    return t


def fmt_decimal(unscaled: int, scale: int) -> str:
    sign = "-" if unscaled < 0 else ""
    q = abs(unscaled)
    if scale == 0:
        return f"{sign}{q}"
    ip, fp = divmod(q, 10**scale)
    return f"{sign}{ip}.{fp:0{scale}d}"


def fmt_float(x, width: int) -> str:
    """Shortest round-trip text in the given width (numpy's str, Python repr style)."""
    v = {16: np.float16, 32: np.float32, 64: np.float64}[width](x)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if width == 64:
        return repr(float(v))
    return str(v)


def _float_json(v: float):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def describe(physical: str, logical: str, type_length, b: bytes):
    """Plain bytes -> (value text, value_json_typed, physical_json)."""
    name, args = parse_logical(logical)
    if physical in ("INT32", "INT64"):
        signed_v = int.from_bytes(b, "little", signed=True)
        if name == "INT":
            v = signed_v if args[1] == "true" else int.from_bytes(b, "little", signed=False)
            return str(v), v, signed_v
        if name in ("NONE",):
            return str(signed_v), signed_v, signed_v
        if name == "DATE":
            t = _days_to_date(signed_v).isoformat()
        elif name == "DECIMAL":
            t = fmt_decimal(signed_v, int(args[1]))
        elif name == "TIMESTAMP":
            t = fmt_ticks(signed_v, args[0], True) + ("Z" if args[1] == "true" else "")
        elif name == "TIME":
            t = fmt_ticks(signed_v, args[0], False)
        else:
            raise ValueError(f"unsupported {physical} {logical}")
        return t, t, signed_v
    if physical == "FLOAT":
        v = struct.unpack("<f", b)[0]
        return fmt_float(v, 32), _float_json(v), _float_json(v)
    if physical == "DOUBLE":
        v = struct.unpack("<d", b)[0]
        return fmt_float(v, 64), _float_json(v), _float_json(v)
    if physical == "INT96":
        nanos = int.from_bytes(b[:8], "little", signed=True)
        jd = int.from_bytes(b[8:], "little", signed=True)
        t = fmt_ticks((jd - JULIAN_EPOCH) * 86400 * 10**9 + nanos, "NANOS", True)
        return t, t, b.hex()
    # BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY
    if name in ("STRING", "ENUM", "JSON"):
        t = b.decode("utf-8")  # raises on invalid UTF-8: such rows must not exist
        return t, t, b.hex()
    if name == "DECIMAL":
        t = fmt_decimal(int.from_bytes(b, "big", signed=True), int(args[1]))
        return t, t, b.hex()
    if name == "UUID":
        h = b.hex()
        t = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return t, t, h
    if name == "FLOAT16":
        v = float(np.frombuffer(b, dtype="<f2")[0])
        return fmt_float(v, 16), _float_json(v), b.hex()
    if name in ("NONE", "BSON"):
        t = "0x" + b.hex()
        return t, t, b.hex()
    raise ValueError(f"unsupported {physical} {logical}")


# ----------------------------------------------------------------------------- parsing (self-check)

def _parse_ticks(text: str, unit: str, with_date: bool) -> int:
    if with_date:
        d, t = text.split("T")
        days = (_dt.date.fromisoformat(d) - EPOCH).days
    else:
        days, t = 0, text
    hms, frac = t.split(".")
    assert len(frac) == FRAC_DIGITS[unit], text
    hh, mm, ss = (int(x) for x in hms.split(":"))
    return ((days * 86400 + hh * 3600 + mm * 60 + ss) * UNIT_PER_SEC[unit]) + int(frac)


def _parse_decimal(text: str, scale: int) -> int:
    neg = text.startswith("-")
    t = text[1:] if neg else text
    if scale:
        ip, fp = t.split(".")
        assert len(fp) == scale, text
        v = int(ip) * 10**scale + int(fp)
    else:
        assert "." not in t
        v = int(t)
    return -v if neg else v


def encode_text(physical: str, logical: str, type_length, text: str) -> bytes:
    """Canonical text -> plain bytes (the inverse of describe; used to self-check rows)."""
    name, args = parse_logical(logical)
    if physical in ("INT32", "INT64"):
        n = 4 if physical == "INT32" else 8
        if name == "INT" or name == "NONE":
            v = int(text)
            if v >= 2 ** (8 * n - 1):
                v -= 2 ** (8 * n)
        elif name == "DATE":
            v = (_dt.date.fromisoformat(text) - EPOCH).days
        elif name == "DECIMAL":
            v = _parse_decimal(text, int(args[1]))
        elif name == "TIMESTAMP":
            if args[1] == "true":
                assert text.endswith("Z"), text
                text = text[:-1]
            v = _parse_ticks(text, args[0], True)
        elif name == "TIME":
            v = _parse_ticks(text, args[0], False)
        else:
            raise ValueError(logical)
        return v.to_bytes(n, "little", signed=True)
    if physical in ("FLOAT", "DOUBLE") or name == "FLOAT16":
        width = {"FLOAT": 32, "DOUBLE": 64}.get(physical, 16)
        fmt = {32: "<f4", 64: "<f8", 16: "<f2"}[width]
        if text == "NaN":
            return {32: F32_NAN, 64: F64_NAN, 16: F16_NAN}[width]
        return np.array([float(text)], dtype=np.float64).astype(fmt).tobytes()
    if physical == "INT96":
        ticks = _parse_ticks(text, "NANOS", True)
        days, nanos = divmod(ticks, 86400 * 10**9)
        return nanos.to_bytes(8, "little", signed=True) + (days + JULIAN_EPOCH).to_bytes(4, "little", signed=True)
    if name in ("STRING", "ENUM", "JSON"):
        return text.encode("utf-8")
    if name == "DECIMAL":
        v = _parse_decimal(text, int(args[1]))
        if physical == "FIXED_LEN_BYTE_ARRAY":
            return v.to_bytes(type_length, "big", signed=True)
        return minimal_twos_complement(v)
    if name == "UUID":
        return bytes.fromhex(text.replace("-", ""))
    assert text.startswith("0x"), text
    return bytes.fromhex(text[2:])


def minimal_twos_complement(v: int) -> bytes:
    n = 1
    while not (-(2 ** (8 * n - 1)) <= v < 2 ** (8 * n - 1)):
        n += 1
    return v.to_bytes(n, "big", signed=True)


# ----------------------------------------------------------------------------- random values of a column's domain

_WORDS = ["alpha", "beta", "gamma", "delta", "café", "naïve", "Ωmega", "日本語", "🦀", "Ünïcödé", "ß", "x y", " ", "tab\t", "é"]


def _rand_float(rng: random.Random) -> float:
    k = rng.random()
    if k < 0.4:
        return rng.randint(-4000, 4000) / 8.0
    if k < 0.7:
        return rng.uniform(-1e6, 1e6)
    if k < 0.9:
        return math.ldexp(rng.uniform(-1, 1), rng.randint(-60, 60))
    return rng.uniform(-1, 1)


def edge_values(physical: str, logical: str, type_length) -> list[bytes]:
    """Edge values of the domain (plain bytes); callers drop the present ones."""
    name, args = parse_logical(logical)
    out: list[bytes] = []
    if physical in ("INT32", "INT64"):
        n = 4 if physical == "INT32" else 8
        if name in ("INT", "NONE"):
            bits, signed = int_domain(physical, logical)
            lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
            for v in sorted({0, 1, lo, hi, lo + 1, hi - 1} | ({-1} if signed else set())):
                out.append((v if v < 2 ** (8 * n - 1) else v - 2 ** (8 * n)).to_bytes(n, "little", signed=True))
        elif name == "DECIMAL":
            p = int(args[0])
            for v in (0, 1, -1, 10**p - 1, -(10**p - 1)):
                out.append(v.to_bytes(n, "little", signed=True))
        elif name == "TIME":
            per = UNIT_PER_SEC[args[0]]
            for v in (0, 86400 * per - 1, 12 * 3600 * per):
                out.append(v.to_bytes(n, "little", signed=True))
        else:  # DATE, TIMESTAMP
            for v in (0, -1, 1):
                out.append(v.to_bytes(n, "little", signed=True))
    elif physical == "FLOAT":
        for v in (0.0, -0.0, float("inf"), float("-inf"), 1.0, -1.0, 3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38):
            out.append(struct.pack("<f", v))
        out.append(F32_NAN)
    elif physical == "DOUBLE":
        for v in (0.0, -0.0, float("inf"), float("-inf"), 1.0, -1.0, 1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 0.1):
            out.append(struct.pack("<d", v))
        out.append(F64_NAN)
    elif physical == "INT96":
        out.append((0).to_bytes(8, "little") + JULIAN_EPOCH.to_bytes(4, "little"))
        out.append((86400 * 10**9 - 1).to_bytes(8, "little") + (JULIAN_EPOCH - 1).to_bytes(4, "little"))
    elif name == "FLOAT16":
        for h in ("0000", "0080", "007c", "00fc", "003c", "00bc", "ff7b", "0100", "0004"):
            out.append(bytes.fromhex(h))
        out.append(F16_NAN)
    elif name in ("STRING", "ENUM", "JSON"):
        for s in ("", " ", "0", "é", "日本語", "🦀", "NULL"):
            out.append(s.encode())
    elif name == "DECIMAL":
        p = int(args[0])
        for v in (0, 1, -1, 10**p - 1, -(10**p - 1)):
            out.append(v.to_bytes(type_length, "big", signed=True) if physical == "FIXED_LEN_BYTE_ARRAY" else minimal_twos_complement(v))
    elif physical == "FIXED_LEN_BYTE_ARRAY":
        out += [bytes(type_length), b"\xff" * type_length, b"\x01" + bytes(type_length - 1)]
    else:  # binary
        out += [b"", b"\x00", b"\xff", b"\x00\x00"]
    return out


def random_value(rng: random.Random, physical: str, logical: str, type_length) -> bytes:
    """A random value of the column's logical domain, as plain bytes."""
    name, args = parse_logical(logical)
    if physical in ("INT32", "INT64"):
        n = 4 if physical == "INT32" else 8
        if name in ("INT", "NONE"):
            bits, signed = int_domain(physical, logical)
            if rng.random() < 0.4:
                v = rng.randint(-1000, 1000) if signed else rng.randint(0, 2000)
                v = max(min(v, 2 ** (bits - 1) - 1 if signed else 2**bits - 1), -(2 ** (bits - 1)) if signed else 0)
            else:
                v = rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else rng.randint(0, 2**bits - 1)
            if v >= 2 ** (8 * n - 1):
                v -= 2 ** (8 * n)
        elif name == "DATE":
            v = rng.randint(-25000, 40000)
        elif name == "DECIMAL":
            p = int(args[0])
            v = rng.randint(-(10**p - 1), 10**p - 1) if rng.random() < 0.6 else rng.randint(-10**4, 10**4)
        elif name == "TIME":
            v = rng.randrange(86400 * UNIT_PER_SEC[args[0]])
        elif name == "TIMESTAMP":
            per = UNIT_PER_SEC[args[0]]
            v = rng.randint(-2 * 10**9, 4 * 10**9) * per + rng.randrange(per)
            if name == "TIMESTAMP" and args[0] == "NANOS":
                v = max(min(v, 2**63 - 1), -(2**63))
        else:
            raise ValueError(logical)
        return v.to_bytes(n, "little", signed=True)
    if physical == "FLOAT":
        return struct.pack("<f", np.float32(_rand_float(rng)))
    if physical == "DOUBLE":
        return struct.pack("<d", _rand_float(rng))
    if physical == "INT96":
        nanos = rng.randrange(86400 * 10**9)
        jd = JULIAN_EPOCH + rng.randint(-20000, 30000)
        return nanos.to_bytes(8, "little") + jd.to_bytes(4, "little")
    if name == "FLOAT16":
        while True:
            b = rng.getrandbits(16).to_bytes(2, "little")
            if not np.isnan(np.frombuffer(b, dtype="<f2")[0]):
                return b
    if name in ("STRING", "ENUM", "JSON"):
        k = rng.random()
        if k < 0.5:
            return str(rng.randint(0, 10**6)).encode()
        return (rng.choice(_WORDS) + rng.choice(["", "-", "/", " "]) + str(rng.randint(0, 99999))).encode()
    if name == "DECIMAL":
        p = int(args[0])
        v = rng.randint(-(10**p - 1), 10**p - 1)
        return v.to_bytes(type_length, "big", signed=True) if physical == "FIXED_LEN_BYTE_ARRAY" else minimal_twos_complement(v)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return rng.getrandbits(8 * type_length).to_bytes(type_length, "little")
    n = rng.randint(0, 24)
    return rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""
