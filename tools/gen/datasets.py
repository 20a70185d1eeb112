"""Deterministic source tables (pyarrow) for the writers in tools/gen/writers.py.

Every column is drawn from a global value pool plus one pool per row group (so many values
live only in some row groups), with ~10 % nulls and a few edge values sprinkled into random
row groups. Row-group boundaries here are the intended ones; each writer is told the same
row-group size.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import struct
import uuid as _uuid

import numpy as np
import pyarrow as pa

from common import rng_for

NULL_FRAC = 0.10


class Col:
    def __init__(self, name, gen, edges=(), global_n=80, rg_n=120, null_frac=NULL_FRAC):
        self.name, self.gen, self.edges = name, gen, list(edges)
        self.global_n, self.rg_n, self.null_frac = global_n, rg_n, null_frac


def draw(seed_parts, col: Col, rg_rows: list[int]) -> list:
    """Python values (None = null) for one column, row group after row group."""
    rng = rng_for(*seed_parts, col.name)
    glob = [col.gen(rng) for _ in range(col.global_n)]
    out = []
    for r, n in enumerate(rg_rows):
        local = [col.gen(rng) for _ in range(col.rg_n)]
        for _ in range(n):
            k = rng.random()
            if k < col.null_frac:
                out.append(None)
            elif k < col.null_frac + 0.4:
                out.append(rng.choice(glob))
            else:
                out.append(rng.choice(local))
    # edge values: each overwrites a random non-edge row of a random row group
    starts = np.cumsum([0] + rg_rows)
    for e in col.edges:
        r = rng.randrange(len(rg_rows))
        out[rng.randrange(int(starts[r]), int(starts[r + 1]))] = e
    return out


# ---------------------------------------------------------------------------------------- generators

def g_int(bits, signed=True, small=0.3):
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)

    def f(rng):
        if rng.random() < small:
            return max(lo, min(hi, rng.randint(-300, 300) if signed else rng.randint(0, 600)))
        return rng.randint(lo, hi)
    return f


def int_edges(bits, signed=True):
    if signed:
        return [0, -1, -(2 ** (bits - 1)), 2 ** (bits - 1) - 1]
    return [0, 2**bits - 1, 2 ** (bits - 1), 2 ** (bits - 1) - 1]


def g_days(rng):
    return rng.randint(-20000, 30000)


def g_ticks(per_sec):
    def f(rng):
        k = rng.random()
        if k < 0.3:  # whole seconds
            return rng.randint(-10**9, 2 * 10**9) * per_sec
        return rng.randint(-10**9, 2 * 10**9) * per_sec + rng.randrange(per_sec)
    return f


def g_tod(per_sec):
    return lambda rng: rng.randrange(86400 * per_sec)


def g_unscaled(p, small=0.3):
    def f(rng):
        if rng.random() < small:
            return rng.randint(-5000, 5000)
        return rng.randint(-(10**p - 1), 10**p - 1)
    return f


def dec(unscaled, scale):
    if unscaled is None:
        return None
    sign = 1 if unscaled < 0 else 0
    return decimal.Decimal((sign, tuple(int(c) for c in str(abs(unscaled))), -scale))


def g_float(rng):
    k = rng.random()
    if k < 0.5:
        return rng.randint(-4000, 4000) / 8.0
    if k < 0.8:
        return rng.uniform(-1e6, 1e6)
    return math.ldexp(rng.uniform(-1, 1), rng.randint(-70, 70))


def g_f16(rng):
    if rng.random() < 0.6:
        return rng.randint(-4000, 4000) / 16.0
    return float(np.float16(math.ldexp(rng.uniform(-1, 1), rng.randint(-20, 15))))


F32_EDGES = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.401298464324817e-45, 1.1754942106924411e-38, 3.4028234663852886e38, -3.4028234663852886e38]
F64_EDGES = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 5e-324, 2.225073858507201e-308, 1.7976931348623157e308, 0.1]
F16_EDGES = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 5.960464477539063e-08, 6.097555160522461e-05, 65504.0, -65504.0]

WORDS = ["alpha", "beta", "gamma", "café", "naïve", "Ωmega", "日本語", "🦀", "Ünïcödé", "straße", "x y", "tab\tsep", "emoji 🎉"]


def g_str(rng):
    k = rng.random()
    if k < 0.4:
        return str(rng.randint(0, 10**6))
    return rng.choice(WORDS) + rng.choice(["", "-", "/", " ", "+"]) + str(rng.randint(0, 99999))


STR_EDGES = ["", " ", "日本語", "🦀", "\u00e9", "e\u0301"]  # precomposed and decomposed é are different bytes


def g_bin(rng):
    n = rng.randint(1, 24)
    return bytes(rng.getrandbits(8) for _ in range(n))


BIN_EDGES = [b"", b"\x00", b"\xff\xff"]


def g_fixed(n):
    return lambda rng: bytes(rng.getrandbits(8) for _ in range(n))


def g_uuid(rng):
    return _uuid.UUID(int=rng.getrandbits(128), version=4).bytes


# ---------------------------------------------------------------------------------------- arrays

def arr_int(vals, t):
    return pa.array(vals, type=t)


def arr_cast(vals, storage, t):
    return pa.array(vals, type=storage).cast(t)


def arr_f16(vals):
    mask = np.array([v is None for v in vals])
    data = np.array([0.0 if v is None else v for v in vals], dtype=np.float16)
    return pa.array(data, mask=mask, type=pa.float16())


def arr_uuid(vals):
    storage = pa.array(vals, type=pa.binary(16))
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def build(seed, rg_rows, spec):
    """spec: list of (Col, to_array) -> pa.Table."""
    cols, names = [], []
    for col, to_array in spec:
        cols.append(to_array(draw(seed, col, rg_rows)))
        names.append(col.name)
    return pa.table(cols, names=names)


# ---------------------------------------------------------------------------------------- tables

def ints_table(seed="ints", rg_rows=(1000, 1000, 1000, 1000), unsigned=True, decimals=True):
    rg_rows = list(rg_rows)
    spec = [
        (Col("i8", g_int(8), int_edges(8), 40, 40), lambda v: arr_int(v, pa.int8())),
        (Col("i16", g_int(16), int_edges(16)), lambda v: arr_int(v, pa.int16())),
        (Col("i32", g_int(32), int_edges(32)), lambda v: arr_int(v, pa.int32())),
        (Col("i64", g_int(64), int_edges(64)), lambda v: arr_int(v, pa.int64())),
    ]
    if unsigned:
        spec += [
            (Col("u8", g_int(8, False), int_edges(8, False), 40, 40), lambda v: arr_int(v, pa.uint8())),
            (Col("u16", g_int(16, False), int_edges(16, False)), lambda v: arr_int(v, pa.uint16())),
            (Col("u32", g_int(32, False), int_edges(32, False)), lambda v: arr_int(v, pa.uint32())),
            (Col("u64", g_int(64, False), int_edges(64, False)), lambda v: arr_int(v, pa.uint64())),
        ]
    if decimals:
        spec += [
            (Col("dec9_2", g_unscaled(9), [0, 999999999, -999999999, -1]), lambda v: pa.array([dec(x, 2) for x in v], pa.decimal128(9, 2))),
            (Col("dec18_4", g_unscaled(18), [0, 10**18 - 1, -(10**18 - 1), 1]), lambda v: pa.array([dec(x, 4) for x in v], pa.decimal128(18, 4))),
        ]
    return build((seed,), rg_rows, spec)


def temporal_table(seed="temporal", rg_rows=(1000, 1000, 1000, 1000), nanos=True, time_cols=True, utc_and_local=True):
    rg_rows = list(rg_rows)
    spec = [(Col("date", g_days, [0, -1, -719162, 2932896]), lambda v: arr_cast(v, pa.int32(), pa.date32()))]
    if time_cols:
        spec += [
            (Col("time_ms", g_tod(10**3), [0, 86399999]), lambda v: arr_cast(v, pa.int32(), pa.time32("ms"))),
            (Col("time_us", g_tod(10**6), [0, 86399999999]), lambda v: arr_cast(v, pa.int64(), pa.time64("us"))),
        ]
        if nanos:
            spec.append((Col("time_ns", g_tod(10**9), [0, 86399999999999]), lambda v: arr_cast(v, pa.int64(), pa.time64("ns"))))
    spec += [
        (Col("ts_ms", g_ticks(10**3), [0, -1]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("ms"))),
        (Col("ts_us_utc", g_ticks(10**6), [0, -1]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("us", tz="UTC"))),
    ]
    if utc_and_local:
        spec += [
            (Col("ts_ms_utc", g_ticks(10**3), [0]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("ms", tz="UTC"))),
            (Col("ts_us", g_ticks(10**6), [0, 1]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("us"))),
        ]
    if nanos:
        spec += [
            (Col("ts_ns", g_ticks(10**9), [0, -1]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("ns"))),
            (Col("ts_ns_utc", g_ticks(10**9), [0]), lambda v: arr_cast(v, pa.int64(), pa.timestamp("ns", tz="UTC"))),
        ]
    return build((seed,), rg_rows, spec)


def float_bytes_table(seed="float_bytes", rg_rows=(1000, 1000, 1000, 1000), f16=True, uuid=True, fixed=True, dec_flba=True):
    rg_rows = list(rg_rows)
    spec = [
        (Col("f32", g_float, F32_EDGES), lambda v: pa.array(v, pa.float32())),
        (Col("f64", g_float, F64_EDGES), lambda v: pa.array(v, pa.float64())),
    ]
    if f16:
        spec.append((Col("f16", g_f16, F16_EDGES), arr_f16))
    spec += [
        (Col("str", g_str, STR_EDGES), lambda v: pa.array(v, pa.string())),
        (Col("bin", g_bin, BIN_EDGES), lambda v: pa.array(v, pa.binary())),
    ]
    if fixed:
        spec.append((Col("fixed16", g_fixed(16), [bytes(16), b"\xff" * 16]), lambda v: pa.array(v, pa.binary(16))))
    if uuid:
        spec.append((Col("uuid", g_uuid, [bytes(16)]), arr_uuid))
    if dec_flba:
        spec += [
            (Col("dec38_10", g_unscaled(38), [0, 10**38 - 1, -(10**38 - 1)]), lambda v: pa.array([dec(x, 10) for x in v], pa.decimal128(38, 10))),
            (Col("dec12_2", g_unscaled(12), [0, -1, 10**12 - 1]), lambda v: pa.array([dec(x, 2) for x in v], pa.decimal128(12, 2))),
        ]
    return build((seed,), rg_rows, spec)


def nested_table(seed="nested", rg_rows=(1200, 1200, 1200), with_map=True, tail=True):
    rg_rows = list(rg_rows)
    n = sum(rg_rows)
    rng = rng_for(seed, "shape")
    ids = draw((seed,), Col("id", g_int(64, small=0.5), [0, -1], null_frac=0.0), rg_rows)
    sa = draw((seed,), Col("s.a", g_int(32), [0]), rg_rows)
    sb = draw((seed,), Col("s.b", g_str, ["", "日本語"]), rg_rows)
    s_null = [rng.random() < 0.08 for _ in range(n)]
    s = pa.StructArray.from_arrays(
        [pa.array(sa, pa.int32()), pa.array(sb, pa.string())], names=["a", "b"],
        mask=pa.array(s_null, pa.bool_()))

    def list_col(name, gen, edges, t):
        # elements drawn per row group from that row group's pools
        lens = [0 if rng.random() < 0.1 else rng.randint(0, 4) for _ in range(n)]
        # per row group element counts
        rg_elems, pos = [], 0
        for rr in rg_rows:
            rg_elems.append(sum(lens[pos:pos + rr]))
            pos += rr
        elems = draw((seed,), Col(name, gen, edges, null_frac=0.05), rg_elems)
        offsets, o = [0], 0
        for ln in lens:
            o += ln
            offsets.append(o)
        nulls = [rng.random() < 0.08 and ln == 0 for ln in lens]
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(elems, t), mask=pa.array(nulls, pa.bool_()))

    cols = {"id": pa.array(ids, pa.int64()), "s": s,
            "l": list_col("l", g_int(64), [0, -(2**63)], pa.int64()),
            "ls": list_col("ls", g_str, [""], pa.string())}
    if with_map:
        lens = [rng.randint(0, 3) for _ in range(n)]
        keys_rg, pos = [], 0
        for rr in rg_rows:
            keys_rg.append(sum(lens[pos:pos + rr]))
            pos += rr
        keys = draw((seed,), Col("m.key", g_str, [""], null_frac=0.0), keys_rg)
        vals = draw((seed,), Col("m.value", g_int(32), [0]), keys_rg)
        # keys must be unique within one map: drop repeated entries of a row
        offsets, k2, v2, pos = [0], [], [], 0
        for ln in lens:
            seen = set()
            for j in range(pos, pos + ln):
                if keys[j] not in seen:
                    seen.add(keys[j])
                    k2.append(keys[j])
                    v2.append(vals[j])
            pos += ln
            offsets.append(len(k2))
        cols["m"] = pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(k2, pa.string()), pa.array(v2, pa.int32()))
    if tail:
        cols["tail"] = pa.array(draw((seed,), Col("tail", g_int(32), [0, -1]), rg_rows), pa.int32())
    return pa.table(cols)


def dict_fallback_table(seed, rg_rows=(600, 600, 600, 600), pad=False):
    """`mix`/`smix`: few distinct values in the first half of the rows (the dictionary stays
    small: a writer that skips filters for fully dictionary-encoded chunks writes none) and many
    in the second half (the dictionary overflows, the writer falls back to plain and writes a
    filter). `pad` (random int64) makes row sizes uniform so size-based row groups split evenly."""
    rng = rng_for(seed)
    n = sum(rg_rows)
    vals, svals = [], []
    for i in range(n):
        if rng.random() < 0.05:
            vals.append(None)
            svals.append(None)
        elif i < n // 2:
            vals.append(rng.randint(0, 20))
            svals.append(f"k{rng.randint(0, 20)}")
        else:
            vals.append(rng.getrandbits(63))
            svals.append(f"v{rng.getrandbits(40):x}")
    cols = {"mix": pa.array(vals, pa.int64()), "smix": pa.array(svals, pa.string())}
    if pad:
        cols["pad"] = pa.array([rng.getrandbits(63) for _ in range(n)], pa.int64())
    return pa.table(cols)
