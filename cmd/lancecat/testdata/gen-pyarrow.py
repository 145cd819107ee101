"""Writes the pyarrow fixtures of TestDatasetImportFiles (python3 gen-pyarrow.py; pip install pyarrow)."""
import pyarrow as pa
import pyarrow.feather as feather

t = pa.table({"id": pa.array([0, 1, 2, 3, 4], pa.int64()), "name": ["a", "b", None, "d", "e"]})
with pa.OSFile("pyarrow.arrow", "wb") as f:
    with pa.ipc.new_file(f, t.schema) as w:
        # Two batches: the footer indexes both.
        for b in t.to_batches(max_chunksize=3):
            w.write_batch(b)
# Feather v2 is the IPC file format, here with ZSTD-compressed buffers.
feather.write_feather(t, "pyarrow-zstd.feather", compression="zstd")
