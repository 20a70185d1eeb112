"""`sbbf.Sbbf`, the raw filter: bitsets byte-identical to the ones pyarrow's writer stores for
the same values (every value type), the contract for plain Python values, batch forms over
numpy and pyarrow arrays, errors."""
import datetime
import decimal
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sbbf

N = 3000
RNG = np.random.default_rng(7)
INTS = RNG.integers(-2**62, 2**62, N)
UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1)

# name -> (pyarrow array as written, the same values as Python objects)
COLUMNS = {
    "i64": (pa.array(INTS, pa.int64()), [int(x) for x in INTS]),
    "i32": (pa.array(INTS.astype(np.int32)), [np.int32(x) for x in INTS.astype(np.int32)]),
    "u32": (pa.array(INTS.astype(np.uint32)), [np.uint32(x) for x in INTS.astype(np.uint32)]),
    "u64": (pa.array(INTS.astype(np.uint64)), [np.uint64(x) for x in INTS.astype(np.uint64)]),
    "f64": (pa.array(INTS / 7.0), [float(x) for x in INTS / 7.0]),
    "f32": (pa.array((INTS / 7.0).astype(np.float32)),
            [np.float32(x) for x in (INTS / 7.0).astype(np.float32)]),
    "str": (pa.array([f"s{x}é" for x in INTS]), [f"s{x}é" for x in INTS]),
    "bin": (pa.array([x.tobytes() for x in INTS], pa.binary()), [x.tobytes() for x in INTS]),
    "date": (pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=int(x) % 30000)
                       for x in INTS]),
             [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(x) % 30000) for x in INTS]),
    "ts": (pa.array([EPOCH + datetime.timedelta(microseconds=int(x) % 10**15) for x in INTS]),
           [EPOCH + datetime.timedelta(microseconds=int(x) % 10**15) for x in INTS]),
    "ts_utc": (pa.array([(EPOCH + datetime.timedelta(microseconds=int(x) % 10**15)).replace(
        tzinfo=UTC) for x in INTS]),
               [(EPOCH + datetime.timedelta(microseconds=int(x) % 10**15)).replace(tzinfo=UTC)
                for x in INTS]),
    "time": (pa.array([(EPOCH + datetime.timedelta(microseconds=int(x) % 86_400_000_000)).time()
                       for x in INTS]),
             [(EPOCH + datetime.timedelta(microseconds=int(x) % 86_400_000_000)).time()
              for x in INTS]),
    "dec": (pa.array([decimal.Decimal(int(x) % 10**9).scaleb(-2) for x in INTS],
                     pa.decimal128(9, 2)),
            [decimal.Decimal(int(x) % 10**9).scaleb(-2) for x in INTS]),
    "uuid": (pa.array([uuid.UUID(int=int(x) % 2**64 * 2**64 + 1).bytes for x in INTS],
                      pa.binary(16)),
             [uuid.UUID(int=int(x) % 2**64 * 2**64 + 1) for x in INTS]),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Each column written by pyarrow with a Bloom filter: the bitsets it stored."""
    path = tmp_path_factory.mktemp("w") / "all.parquet"
    table = pa.table({k: v[0] for k, v in COLUMNS.items()})
    pq.write_table(table, path, row_group_size=N, store_decimal_as_integer=True,
                   bloom_filter_options={k: {"ndv": N, "fpp": 0.01} for k in COLUMNS})
    data = path.read_bytes()
    out = {}
    for c in sbbf.inspect(path)["chunks"]:
        assert c["has_filter"] and not c["problems"], c
        start = c["offset"] + c["header_bytes"]
        out[c["column"]] = data[start:start + c["bitset_bytes"]]
    assert sorted(out) == sorted(COLUMNS)
    return out


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_bitsets_equal_pyarrows(written, name):
    array, values = COLUMNS[name]
    want = written[name]
    batch = sbbf.Sbbf(len(want))
    batch.insert_many(array)
    assert batch.to_bytes() == want, name
    one = sbbf.Sbbf(len(want))
    for v in values:
        one.insert(v)
    assert one.to_bytes() == want, name
    listed = sbbf.Sbbf(len(want))
    listed.insert_many(values if name not in ("i32", "u32", "u64", "f32") else array.to_numpy())
    assert listed.to_bytes() == want, name
    read = sbbf.Sbbf.from_bytes(want)
    assert read.contains_many(array).all()
    assert all(read.contains(v) for v in values[:100])


def test_plain_python_values():
    a, b = sbbf.Sbbf(1024), sbbf.Sbbf(1024)
    a.insert(5)
    b.insert_many(pa.array([5], pa.int64()))
    assert a == b  # an int is an INT64
    c = sbbf.Sbbf(1024)
    c.insert(np.int32(5))
    assert c != a  # an int32 is an INT32 (4 bytes)
    d, e = sbbf.Sbbf(1024), sbbf.Sbbf(1024)
    d.insert("é")
    e.insert(b"\xc3\xa9")
    assert d == e  # a str is its UTF-8 bytes
    f, g = sbbf.Sbbf(1024), sbbf.Sbbf(1024)
    f.insert(1.5)
    g.insert_many(np.array([1.5]))
    assert f == g  # a float is a DOUBLE
    assert a.contains(5) and not a.contains(6) or a.contains(6)  # no false negative
    assert a.contains(5)


def test_batch_forms():
    f = sbbf.Sbbf.with_ndv_fpp(10_000, 0.01)
    keys = np.arange(10_000, dtype=np.int64)
    f.insert_many(keys)
    got = f.contains_many(keys)
    assert got.dtype == np.bool_ and got.shape == (10_000,) and got.all()
    misses = f.contains_many(np.arange(10_000, 110_000, dtype=np.int64))
    assert misses.mean() < 0.02
    with_nulls = f.contains_many(pa.array([1, None, 2], pa.int64()))
    assert with_nulls.tolist() == [True, False, True]
    chunked = pa.chunked_array([pa.array(["a", "b"]), pa.array(["c"])])
    f.insert_many(chunked)
    assert f.contains_many(["a", "b", "c"]).all()
    dict_arr = pa.array(["x", "y", "x"]).dictionary_encode()
    f.insert_many(dict_arr)
    assert f.contains("x") and f.contains("y")
    # Nulls in a dictionary's values are nulls too: answers stay aligned with the elements.
    dict_nulls = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, None, 2]),
                                                pa.array(["a", None, "c"]))
    g = sbbf.Sbbf(1024)
    g.insert_many(pa.array(["a", "c"]))
    assert g.contains_many(dict_nulls).tolist() == [True, False, True, False, True]
    h2 = sbbf.Sbbf(1024)
    h2.insert_many(dict_nulls)
    assert h2 == g
    assert f.contains_many(pa.array([], pa.int64())).shape == (0,)
    h = sbbf.Sbbf(f.num_bytes)
    h.union(f)
    assert h == f and 0 < h.fill_ratio < 1 and 0 < h.estimated_fpp < 1


def test_bytes_round_trip_and_sizes():
    f = sbbf.Sbbf(1000)
    assert f.num_bytes == 1024 and f.to_bytes() == bytes(1024)
    f.insert_many(range(100))
    g = sbbf.Sbbf.from_bytes(f.to_bytes())
    assert g == f and g.to_bytes() == f.to_bytes()
    assert sbbf.Sbbf.from_bytes(bytes(96)).num_bytes == 96  # need not be a power of two
    assert sbbf.Sbbf.with_ndv_fpp(1_000_000, 0.01).num_bytes == 2 * 1024 * 1024


def test_errors():
    f = sbbf.Sbbf(64)
    for bad in (True, None, 2**63, object()):
        with pytest.raises(sbbf.InputError):
            f.insert(bad)
    with pytest.raises(sbbf.InputError, match="multiple of 32"):
        sbbf.Sbbf.from_bytes(b"x" * 33)
    with pytest.raises(sbbf.InputError, match="between 0 and 1"):
        sbbf.Sbbf.with_ndv_fpp(10, 1.5)
    with pytest.raises(sbbf.InputError):
        f.insert_many(pa.array([True, False]))
    with pytest.raises(sbbf.InputError):
        f.insert_many(pa.array([[1], [2]]))
    with pytest.raises(sbbf.InputError, match="same size|sizes"):
        f.union(sbbf.Sbbf(128))
