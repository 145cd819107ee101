"""pylance (the `lance` package) on a Lance dataset directory, for the Go format tests
(lance/pylance_sdk_test.go): writes datasets of every Arrow type Lance stores in a chosen
data_storage_version, reads datasets (Go's or its own) and prints their values in the encoding of
lance/internal/sdkjson (scripts/lancedb/encode.mjs), and appends rows it read to a dataset.

usage: python dataset.py write <uri> <storage-version|default> <start> <rows> [max-rows-per-file [stable]]
       python dataset.py read <uri> [queries.json]
       python dataset.py append-head <uri> <k>    appends the dataset's first k rows again
       python dataset.py index <uri>              BTREE on id, BITMAP on color, INVERTED on text
       python dataset.py model <start> <rows>     the rows write writes, encoded (no dataset)

write creates (or, when <uri> exists, appends to) a dataset of rows [start, start+rows) of the
model below, every value a function of the row number. read prints
  {"lance", "version", "data_storage_version", "count_rows", "file_versions",
   "scan": {"num_rows", "columns": {name: [value...]}}, "filters": [{"where", "ids"}]}
with queries.json {"filters": ["id % 7 = 3", ...], "fts": ["word", ...]} (rows matching, as their
"id", through pylance's indices where it has them; fts: the text column's), and "indices":
[{"name", "type", "fragments"}] (the fragments each covers).
Values: int64/uint64/timestamps/date64/durations/time64 as decimal strings, other integers as
numbers, floats as the hex of their bits, binary as base64, decimals as their unscaled integer.

Like every Python script here it leaves with os._exit after printing (pylance's native code has
aborted at interpreter finalization).
"""

import base64
import datetime
import decimal
import json
import os
import sys

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DIM = 16
WORDS = ["lance", "catalog", "vector", "column", "arrow", "fragment", "manifest", "index", "query", "table"]


def schema():
    point = pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])
    return pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("i8", pa.int8()),
            pa.field("i16", pa.int16()),
            pa.field("i32", pa.int32()),
            pa.field("u8", pa.uint8()),
            pa.field("u16", pa.uint16()),
            pa.field("u32", pa.uint32()),
            pa.field("u64", pa.uint64()),
            pa.field("f16", pa.float16()),
            pa.field("f32", pa.float32()),
            pa.field("f64", pa.float64()),
            pa.field("flag", pa.bool_()),
            pa.field("name", pa.string()),
            pa.field("color", pa.string()),  # three values: dictionary encodings
            pa.field("text", pa.string()),  # sentences: FSST
            pa.field("blob", pa.string()),  # a few values of KiBs: full-zip pages
            pa.field("lname", pa.large_string()),
            pa.field("bin", pa.binary()),
            pa.field("lbin", pa.large_binary()),
            pa.field("fbin", pa.binary(6)),
            pa.field("const", pa.int32()),  # one value: constant / RLE
            pa.field("sorted", pa.int64()),  # slowly rising: bit-packing, RLE
            pa.field("d32", pa.date32()),
            pa.field("d64", pa.date64()),
            pa.field("ts", pa.timestamp("us")),
            pa.field("ts_tz", pa.timestamp("ns", tz="UTC")),
            pa.field("t64", pa.time64("us")),
            pa.field("dec", pa.decimal128(20, 4)),
            pa.field("vec", pa.list_(pa.float32(), DIM)),
            pa.field("fsl_i", pa.list_(pa.int32(), 3)),
            pa.field("lst", pa.list_(pa.int32())),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("llst", pa.large_list(pa.int64())),
            pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string()), pa.field("c", pa.struct([pa.field("d", pa.float64())]))])),
            pa.field("points", pa.list_(point)),
            pa.field("nothing", pa.string()),  # all null
            pa.field("dict", pa.dictionary(pa.int32(), pa.string())),
        ]
    )


def vec(i):
    return [float(np.float32(np.sin((i + 1) * (j + 1) * 0.37))) for j in range(DIM)]


def rows(start, n, struct_nulls=True):
    out = []
    epoch = datetime.datetime(2020, 1, 1)
    for i in range(start, start + n):
        text = " ".join(WORDS[(i * k + 3) % len(WORDS)] for k in range(1, 4 + i % 9))
        out.append(
            {
                "id": i,
                "i8": (i % 256) - 128,
                "i16": None if i % 17 == 0 else (i * 37) % 65536 - 32768,
                "i32": None if i % 11 == 0 else i * 1000 - 7,
                "u8": i % 256,
                "u16": (i * 13) % 65536,
                "u32": None if i % 19 == 0 else (i * 2654435761) % (2**32),
                "u64": 2**63 + i * 3,
                "f16": np.float16(i / 8.0),
                "f32": None if i % 13 == 0 else float(np.float32(i * 0.25 - 3.5)),
                "f64": [-0.0, float("inf"), 1e300, -1e-300][i % 4] if i % 50 == 1 else i / 3.0,
                "flag": None if i % 5 == 0 else i % 3 == 0,
                "name": None if i % 7 == 0 else f"n{i}",
                "color": ["red", "green", "blue"][i % 3],
                "text": text,
                "blob": ("b%d-" % i) * 2000 if i % 400 == 3 else None,
                "lname": "" if i % 10 == 0 else f"large-{i}",
                "bin": bytes((i * k) % 256 for k in range(i % 9)),
                "lbin": None if i % 6 == 0 else bytes([i % 256, (i >> 8) % 256]),
                "fbin": bytes((i + k) % 256 for k in range(6)),
                "const": 42,
                "sorted": i // 100,
                "d32": datetime.date(2020, 1, 1) + datetime.timedelta(days=i),
                "d64": datetime.date(1999, 12, 31) + datetime.timedelta(days=i % 1000),
                "ts": epoch + datetime.timedelta(seconds=i * 61, microseconds=i),
                "ts_tz": None if i % 9 == 0 else 1_700_000_000_000_000_000 + i * 1_000_003,
                "t64": datetime.time(i % 24, i % 60, i % 60, i % 1000000),
                "dec": decimal.Decimal(i * 12345 - 999999) / decimal.Decimal(10000),
                "vec": vec(i),
                "fsl_i": None if i % 8 == 0 else [i, -i, i * 2],
                "lst": None if i % 10 == 0 else list(range(i % 5)),
                "tags": [WORDS[(i + k) % len(WORDS)] for k in range(i % 4)],
                "llst": [i * 10**12 + k for k in range(i % 3)],
                "st": None if struct_nulls and i % 12 == 0 else {"a": i, "b": None if i % 4 == 0 else f"s{i}", "c": {"d": i * 0.5}},
                "points": [{"x": i + k, "y": None if k == 1 else f"p{k}"} for k in range(i % 3)],
                "nothing": None,
                "dict": ["alpha", "beta", None, "gamma"][i % 4],
            }
        )
    return out


def table(start, n, struct_nulls=True):
    rs = rows(start, n, struct_nulls)
    s = schema()
    cols = []
    for f in s:
        vals = [r[f.name] for r in rs]
        if pa.types.is_dictionary(f.type):
            cols.append(pa.array(vals, pa.string()).dictionary_encode())
        elif pa.types.is_timestamp(f.type) and f.type.tz:
            # nanoseconds since the epoch: Python's datetime stops at microseconds
            cols.append(pa.array(vals, pa.int64()).cast(f.type))
        else:
            cols.append(pa.array(vals, f.type))
    return pa.Table.from_arrays(cols, schema=s)


def _bits(arr, width, as_type):
    ints = arr.view(as_type).to_pylist()
    return [None if v is None else format(v, "0%dx" % width) for v in ints]


def encode(arr):
    """arr's values, one per row, in the sdkjson encoding."""
    if isinstance(arr, pa.ChunkedArray):
        if pa.types.is_dictionary(arr.type):
            # chunks of different dictionaries (one per file) do not concatenate
            arr = pa.chunked_array([c.dictionary_decode() for c in arr.chunks], arr.type.value_type)
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_dictionary(t):
        return encode(arr.dictionary_decode())
    if pa.types.is_null(t):
        return [None] * len(arr)
    if pa.types.is_int64(t) or pa.types.is_uint64(t):
        return [None if v is None else str(v) for v in arr.to_pylist()]
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return arr.to_pylist()
    if pa.types.is_float16(t):
        return _bits(arr, 4, pa.uint16())
    if pa.types.is_float32(t):
        return _bits(arr, 8, pa.uint32())
    if pa.types.is_float64(t):
        return _bits(arr, 16, pa.uint64())
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return arr.view(pa.int32()).to_pylist()
    if pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return [None if v is None else str(v) for v in arr.view(pa.int64()).to_pylist()]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.to_pylist()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [None if v is None else str(int(v.scaleb(t.scale))) for v in arr.to_pylist()]
    if pa.types.is_fixed_size_list(t):
        n = t.list_size
        vals = encode(arr.values.slice(arr.offset * n, len(arr) * n))
        return [None if not arr[i].is_valid else vals[i * n : (i + 1) * n] for i in range(len(arr))]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offs = arr.offsets.to_pylist()
        vals = encode(arr.values)
        return [None if not arr[i].is_valid else vals[offs[i] : offs[i + 1]] for i in range(len(arr))]
    if pa.types.is_struct(t):
        fields = {t.field(k).name: encode(pc.struct_field(arr, [k])) for k in range(t.num_fields)}
        return [None if not arr[i].is_valid else {name: vals[i] for name, vals in fields.items()} for i in range(len(arr))]
    raise SystemExit(f"dataset.py: no encoding for {t}")


def encode_table(tbl):
    return {"num_rows": tbl.num_rows, "columns": {f.name: encode(tbl.column(f.name)) for f in tbl.schema}}


def file_versions(ds):
    out = set()
    for frag in ds.get_fragments():
        for df in frag.metadata.files:
            out.add(f"{df.file_major_version}.{df.file_minor_version}")
    return sorted(out)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "write":
        uri, version, start, n = args[0], args[1], int(args[2]), int(args[3])
        kw = {}
        if len(args) > 4:
            kw["max_rows_per_file"] = int(args[4])
        if len(args) > 5 and args[5] == "stable":
            kw["enable_stable_row_ids"] = True
        if version != "default":
            kw["data_storage_version"] = version
        mode = "append" if os.path.exists(os.path.join(uri, "_versions")) else "create"
        # Lance 2.0 files cannot say a struct is null (Lance refuses to write one).
        ds = lance.write_dataset(table(start, n, struct_nulls=version != "2.0"), uri, mode=mode, **kw)
        print(json.dumps({"version": ds.version, "data_storage_version": ds.data_storage_version, "count_rows": ds.count_rows()}))
    elif cmd == "read":
        ds = lance.dataset(args[0])
        queries = (json.load(open(args[1])) if len(args) > 1 else None) or {}
        out = {
            "lance": lance.__version__,
            "version": ds.version,
            "data_storage_version": ds.data_storage_version,
            "count_rows": ds.count_rows(),
            "file_versions": file_versions(ds),
            "scan": encode_table(ds.to_table()),
            "filters": [],
        }
        for where in queries.get("filters", []):
            ids = ds.to_table(columns=["id"], filter=where).column("id").to_pylist()
            out["filters"].append({"where": where, "ids": [str(v) for v in sorted(ids)]})
        out["fts"] = []
        for q in queries.get("fts", []):
            ids = ds.to_table(columns=["id"], full_text_query=q).column("id").to_pylist()
            out["fts"].append({"query": q, "ids": [str(v) for v in sorted(ids)]})
        out["indices"] = [
            {"name": i.name, "type": i.index_type, "fragments": sorted({f for seg in i.segments for f in seg.fragment_ids})}
            for i in ds.describe_indices()
        ]
        print(json.dumps(out))
    elif cmd == "append-head":
        ds = lance.dataset(args[0])
        head = ds.to_table(limit=int(args[1]))
        ds = lance.write_dataset(head, args[0], mode="append")
        print(json.dumps({"version": ds.version, "count_rows": ds.count_rows(), "file_versions": file_versions(ds)}))
    elif cmd == "index":
        ds = lance.dataset(args[0])
        ds.create_scalar_index("id", "BTREE", name="id_idx")
        ds.create_scalar_index("color", "BITMAP", name="color_idx")
        ds.create_scalar_index("text", "INVERTED", name="text_idx")
        print(json.dumps({"version": ds.version}))
    elif cmd == "model":
        print(json.dumps(encode_table(table(int(args[0]), int(args[1])))))
    else:
        raise SystemExit(f"dataset.py: unknown command {cmd}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
