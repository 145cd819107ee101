// The expected-JSON encoding of Arrow data read back through the SDK, shared
// by write-fixtures.mjs, read-dataset.mjs and the benchmark. See
// write-fixtures.mjs for the format.
//
// makeEncoder takes the SDK's apache-arrow module (the SDK checks arrow
// objects with instanceof, so scripts must use its copy).

export function makeEncoder(A) {
  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0"))
      .reverse()
      .join("");
  }

  function floatBits(value, width) {
    const buf = new ArrayBuffer(8);
    const dv = new DataView(buf);
    if (width === 32) dv.setFloat32(0, value, true);
    else dv.setFloat64(0, value, true);
    return hex(new Uint8Array(buf, 0, width / 8));
  }

  function int128String(words /* Uint32Array(4), little-endian */) {
    let x = 0n;
    for (let k = 3; k >= 0; k--) x = (x << 32n) | BigInt(words[k]);
    if (x >= 2n ** 127n) x -= 2n ** 128n;
    return x.toString();
  }

  // Encodes row i of an arrow Data (see the file comment for the format). Works
  // on raw buffers so nothing goes through JS numbers that could lose bits.
  function encode(d, i) {
    if (!d.getValid(i)) return null;
    const t = d.type;
    const T = A.Type;
    switch (t.typeId) {
      case T.Null:
        return null;
      case T.Bool: {
        const bit = d.offset + i;
        return ((d.values[bit >> 3] >> (bit & 7)) & 1) === 1;
      }
      case T.Int: {
        const v = d.values[i];
        return t.bitWidth === 64 ? BigInt(v).toString() : v;
      }
      case T.Float: {
        if (t.precision === A.Precision.HALF) return d.values[i].toString(16).padStart(4, "0");
        if (t.precision === A.Precision.SINGLE) return floatBits(d.values[i], 32);
        return floatBits(d.values[i], 64);
      }
      case T.Date:
        if (t.unit === A.DateUnit.DAY) return d.values[i];
        return BigInt(d.values[i]).toString();
      case T.Timestamp:
      case T.Time:
      case T.Duration: {
        if (d.values instanceof BigInt64Array) return d.values[i].toString();
        if (d.stride === 2) {
          // Older arrow-js stores 64-bit values as (lo, hi) int32 pairs.
          const lo = BigInt(d.values[2 * i] >>> 0);
          const hi = BigInt(d.values[2 * i + 1]);
          return ((hi << 32n) | lo).toString();
        }
        return d.values[i].toString();
      }
      case T.Decimal:
        return int128String(d.values.subarray(4 * i, 4 * i + 4));
      case T.Utf8:
      case T.LargeUtf8: {
        const s = Number(d.valueOffsets[i]);
        const e = Number(d.valueOffsets[i + 1]);
        return new TextDecoder("utf-8", { fatal: true }).decode(d.values.subarray(s, e));
      }
      case T.Binary:
      case T.LargeBinary: {
        const s = Number(d.valueOffsets[i]);
        const e = Number(d.valueOffsets[i + 1]);
        return Buffer.from(d.values.subarray(s, e)).toString("base64");
      }
      case T.FixedSizeBinary:
        return Buffer.from(d.values.subarray(i * t.byteWidth, (i + 1) * t.byteWidth)).toString("base64");
      case T.List: {
        const s = d.valueOffsets[i];
        const e = d.valueOffsets[i + 1];
        const out = [];
        for (let j = s; j < e; j++) out.push(encode(d.children[0], j));
        return out;
      }
      case T.FixedSizeList: {
        const out = [];
        for (let j = i * t.listSize; j < (i + 1) * t.listSize; j++) out.push(encode(d.children[0], j));
        return out;
      }
      case T.Struct: {
        const out = {};
        t.children.forEach((f, k) => {
          out[f.name] = encode(d.children[k], i);
        });
        return out;
      }
      case T.Dictionary: {
        const key = Number(d.values[i]);
        const dict = d.dictionary.data;
        let k = key;
        for (const chunk of dict) {
          if (k < chunk.length) return encode(chunk, k);
          k -= chunk.length;
        }
        throw new Error(`dictionary key ${key} out of range`);
      }
      default:
        throw new Error(`no JSON encoding for arrow type ${t}`);
    }
  }

  function encodeTable(table) {
    const columns = {};
    for (const f of table.schema.fields) columns[f.name] = [];
    for (const batch of table.batches) {
      table.schema.fields.forEach((f, k) => {
        const d = batch.data.children[k];
        for (let i = 0; i < d.length; i++) columns[f.name].push(encode(d, i));
      });
    }
    return {
      num_rows: table.numRows,
      schema: table.schema.fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable })),
      columns,
    };
  }

  return { encode, encodeTable };
}
