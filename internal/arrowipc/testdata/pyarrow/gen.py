"""Writes the Arrow IPC fixtures TestStructureAcceptsPyarrow reads: every type Arrow C++ (pyarrow)
writes that arrow-go reads, nested, with nulls, sliced and empty batches, as streams (.arrows)
and files (.arrow), uncompressed, LZ4 and ZSTD, metadata V5 and V4 (without the types V4 cannot
carry); and a dictionary nested in a list. Run with pyarrow 26.0.1 (the pin of
scripts/python/versions.txt), from this directory:

    ~/.cache/lancecat/python/lancedb-0.40.0-*/bin/python3 gen.py
"""

import decimal
import uuid

import numpy as np
import pyarrow as pa

assert pa.__version__ == "26.0.1", pa.__version__

N = 6


def col(typ, values):
    return pa.array(values, type=typ)


def union(mode):
    types = pa.array([0, 1, 0, 1, 0, 1], type=pa.int8())
    ints = pa.array([1, None, 3, 4, None, 6], type=pa.int32())
    strs = pa.array(["a", "b", None, "d", "e", "f"])
    if mode == "sparse":
        return pa.UnionArray.from_sparse(types, [ints, strs], ["i", "s"], [0, 1])
    offsets = pa.array([0, 0, 1, 1, 2, 2], type=pa.int32())
    return pa.UnionArray.from_dense(types, offsets, [ints[:3], strs[:3]], ["i", "s"], [0, 1])


def columns(v4):
    cols = {
        "null": pa.nulls(N),
        "bool": col(pa.bool_(), [True, None, False, True, True, False]),
        "i8": col(pa.int8(), [1, None, -3, 4, 5, 6]),
        "i16": col(pa.int16(), [1, 2, None, 4, 5, 6]),
        "i32": col(pa.int32(), [1, 2, 3, None, 5, 6]),
        "i64": col(pa.int64(), [1, 2, 3, 4, 5, 6]),
        "u8": col(pa.uint8(), [1, 2, 3, 4, None, 6]),
        "u16": col(pa.uint16(), [1, None, 3, 4, 5, 6]),
        "u32": col(pa.uint32(), [1, 2, None, 4, 5, 6]),
        "u64": col(pa.uint64(), [1, 2, 3, None, 5, 6]),
        "f16": pa.array(np.array([1.5, 2, 3, 4, 5, 6], dtype=np.float16), type=pa.float16()),
        "f32": col(pa.float32(), [1.5, 2, None, 3, 4, 5]),
        "f64": col(pa.float64(), [1.5, 2, 3, None, 4, 5]),
        "dec32": col(pa.decimal32(5, 2), [decimal.Decimal("1.23"), None, decimal.Decimal("4.56"), 0, 1, 2]),
        "dec64": col(pa.decimal64(12, 2), [decimal.Decimal("1.23"), None, decimal.Decimal("4.56"), 0, 1, 2]),
        "dec128": col(pa.decimal128(30, 2), [decimal.Decimal("1.23"), None, decimal.Decimal("4.56"), 0, 1, 2]),
        "dec256": col(pa.decimal256(60, 2), [decimal.Decimal("1.23"), None, decimal.Decimal("4.56"), 0, 1, 2]),
        "date32": col(pa.date32(), [1, None, 3, 4, 5, 6]),
        "date64": col(pa.date64(), [86400000, None, 0, 0, 0, 0]),
        "time32s": col(pa.time32("s"), [1, None, 3, 4, 5, 6]),
        "time32ms": col(pa.time32("ms"), [1, None, 3, 4, 5, 6]),
        "time64us": col(pa.time64("us"), [1, None, 3, 4, 5, 6]),
        "time64ns": col(pa.time64("ns"), [1, None, 3, 4, 5, 6]),
        "ts": col(pa.timestamp("us", tz="UTC"), [1, None, 3, 4, 5, 6]),
        "mdn": col(pa.month_day_nano_interval(), [(1, 2, 3), None, (0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3)]),
        "dur": col(pa.duration("ns"), [1, None, 3, 4, 5, 6]),
        "bin": col(pa.binary(), [b"a", None, b"", b"bc", b"def", b"g"]),
        "str": col(pa.string(), ["a", None, "", "bc", "def", "g"]),
        "lbin": col(pa.large_binary(), [b"a", None, b"", b"bc", b"def", b"g"]),
        "lstr": col(pa.large_string(), ["a", None, "", "bc", "def", "g"]),
        "fsb": col(pa.binary(3), [b"abc", None, b"def", b"ghi", b"jkl", b"mno"]),
        "list": col(pa.list_(pa.int32()), [[1, 2], None, [], [None], [5], [6, 7]]),
        "llist": col(pa.large_list(pa.string()), [["a"], None, [], [None, "b"], ["c"], []]),
        "fsl": col(pa.list_(pa.float32(), 2), [[1, 2], None, [3, None], [5, 6], [7, 8], [9, 10]]),
        "struct": col(
            pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.list_(pa.bool_()))]),
            [{"a": 1, "b": "x", "c": [True]}, None, {"a": None, "b": "y", "c": None},
             {"a": 4, "b": None, "c": []}, {"a": 5, "b": "z", "c": [False, None]}, {"a": 6, "b": "w", "c": [True]}],
        ),
        "map": col(pa.map_(pa.string(), pa.int32()), [[("a", 1)], None, [], [("b", None)], [("c", 3), ("d", 4)], [("e", 5)]]),
        "sparse": union("sparse"),
        "dense": union("dense"),
        "dict": pa.array(["a", "b", None, "b", "a", "c"]).dictionary_encode(),
        "uuid": pa.ExtensionArray.from_storage(
            pa.uuid(), pa.array([uuid.UUID(int=i).bytes if i != 1 else None for i in range(N)], type=pa.binary(16))
        ),
    }
    if not v4:
        # Types newer than metadata V4 (Arrow C++ refuses to write them as V4).
        cols["binview"] = col(pa.binary_view(), [b"a", None, b"", b"longer than twelve bytes", b"def", b"g"])
        cols["strview"] = col(pa.string_view(), ["a", None, "a string longer than twelve bytes", "bc", "another long string value", "g"])
        cols["listview"] = col(pa.list_view(pa.int32()), [[1, 2], None, [], [None], [5], [6]])
        cols["llistview"] = col(pa.large_list_view(pa.int64()), [[1, 2], None, [], [None], [5], [6]])
        cols["ree"] = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 6], type=pa.int32()), pa.array(["a", None, "b"]))
    return cols


def table(v4):
    return pa.table(columns(v4))


def write(name, tab, file, **opts):
    rb = tab.combine_chunks().to_batches()[0]
    with open(name, "wb") as out:
        w = (pa.ipc.new_file if file else pa.ipc.new_stream)(out, tab.schema, options=pa.ipc.IpcWriteOptions(**opts))
        for b in (rb, rb.slice(1, 4), rb.slice(0, 0)):  # whole, sliced (buffers rebased), empty
            w.write_batch(b)
        w.close()


# A dictionary nested in a list (our readers decode only top-level ones: checked, not decoded).
nested = pa.table({
    "id": pa.array(range(N), type=pa.int64()),
    "tags": pa.ListArray.from_arrays(
        pa.array([0, 2, 2, 3, 5, 6, 6], type=pa.int32()),
        pa.array(["x", "y", "x", None, "z", "y"]).dictionary_encode(),
    ),
})
for file in (False, True):
    name = f"nested-dict.{'arrow' if file else 'arrows'}"
    write(name, nested, file)
    print(name)

for v4 in (False, True):
    tab = table(v4)
    version = pa.ipc.MetadataVersion.V4 if v4 else pa.ipc.MetadataVersion.V5
    tag = "v4" if v4 else "v5"
    for codec in (None, "lz4", "zstd"):
        for file in (False, True):
            name = f"{tag}-{codec or 'plain'}.{'arrow' if file else 'arrows'}"
            write(name, tab, file, compression=codec, metadata_version=version)
            print(name)
