package lancefile

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Turning decoded values into Arrow arrays. Output buffers come from the
// caller's allocator; decode scratch lives on the Go heap.

// newBuffer makes b an Arrow buffer. On the Go heap (the default
// allocator) it wraps b without a copy when b is 8-byte aligned: decoded
// values are never written after they become an array, and wrapping
// saves a copy of every value of a scan. Other allocators (accounting
// ones, off-heap ones) get a copy they own.
func newBuffer(mem memory.Allocator, b []byte) *memory.Buffer {
	if goHeap(mem) && aligned8(b) {
		return memory.NewBufferBytes(b)
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

func goHeap(mem memory.Allocator) bool {
	if mem == nil {
		return true
	}
	_, ok := mem.(*memory.GoAllocator)
	return ok
}

// validityBuffer packs valid into a bitmap; nil (no buffer) when all valid.
func validityBuffer(mem memory.Allocator, valid []bool, n int) (*memory.Buffer, int, error) {
	if valid == nil {
		return nil, 0, nil
	}
	if len(valid) != n {
		return nil, 0, fmt.Errorf("%d validity entries for %d values: %w", len(valid), n, ErrCorrupt)
	}
	nulls := 0
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	for i, v := range valid {
		if v {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0, nil
	}
	return buf, nulls, nil
}

func boolsToValid(b []byte) []bool {
	if b == nil {
		return nil
	}
	out := make([]bool, len(b))
	for i, x := range b {
		out[i] = x != 0
	}
	return out
}

func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// buildArray makes an array of type dt from v, with valid (nil = all
// valid) as its validity.
func buildArray(mem memory.Allocator, dt arrow.DataType, v *values, valid []bool) (arrow.Array, error) {
	if dt.ID() == arrow.NULL {
		return array.NewNull(v.n), nil
	}
	if v.kind == kindNull {
		v = zeroValuesOf(dt, v.n)
		if v == nil {
			return nil, fmt.Errorf("all-null page of %s: %w", dt, ErrUnsupported)
		}
	}
	vb, nulls, err := validityBuffer(mem, valid, v.n)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (arrow.Array, error) {
		if vb != nil {
			vb.Release()
		}
		return nil, err
	}
	mismatch := func() (arrow.Array, error) {
		return fail(fmt.Errorf("%s column decoded to %d-byte values of kind %d: %w", dt, v.width, v.kind, ErrCorrupt))
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		// Before FixedWidthDataType, which dictionaries also implement.
		return buildDictionary(mem, t, v, vb, nulls)
	case *arrow.BooleanType:
		if v.kind != kindBool {
			return mismatch()
		}
		bits := make([]byte, bitutil.BytesForBits(int64(v.n)))
		for i, b := range v.data {
			if b != 0 {
				bitutil.SetBit(bits, i)
			}
		}
		return makeArray(dt, v.n, []*memory.Buffer{vb, newBuffer(mem, bits)}, nil, nulls), nil
	case arrow.FixedWidthDataType:
		if v.kind != kindFixed || v.width*8 != t.BitWidth() {
			return mismatch()
		}
		return makeArray(dt, v.n, []*memory.Buffer{vb, newBuffer(mem, v.data)}, nil, nulls), nil
	case *arrow.StringType, *arrow.BinaryType:
		if v.kind != kindVariable {
			return mismatch()
		}
		data, shift := variableData(mem, v, math.MaxInt32)
		if v.offsets[v.n]-shift > math.MaxInt32 {
			return fail(fmt.Errorf("%d bytes of %s values exceed 32-bit offsets: %w", v.offsets[v.n]-v.offsets[0], dt, ErrUnsupported))
		}
		offs := make([]int32, v.n+1)
		for i, o := range v.offsets[:v.n+1] {
			offs[i] = int32(o - shift)
		}
		return makeArray(dt, v.n, []*memory.Buffer{vb, newBuffer(mem, arrow.Int32Traits.CastToBytes(offs)), newBuffer(mem, data)}, nil, nulls), nil
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if v.kind != kindVariable {
			return mismatch()
		}
		data, shift := variableData(mem, v, math.MaxInt64)
		offs := make([]int64, v.n+1)
		for i, o := range v.offsets[:v.n+1] {
			offs[i] = int64(o - shift)
		}
		return makeArray(dt, v.n, []*memory.Buffer{vb, newBuffer(mem, arrow.Int64Traits.CastToBytes(offs)), newBuffer(mem, data)}, nil, nulls), nil
	case *arrow.FixedSizeListType:
		if v.kind != kindFSL || int32(v.dim) != t.Len() {
			return mismatch()
		}
		child, err := buildArray(mem, t.Elem(), v.child, boolsToValid(v.itemValid))
		if err != nil {
			return fail(err)
		}
		defer child.Release()
		return makeArray(dt, v.n, []*memory.Buffer{vb}, []arrow.ArrayData{child.Data()}, nulls), nil
	}
	return fail(fmt.Errorf("arrow type %s: %w", dt, ErrUnsupported))
}

// variableData is the data buffer of v's array and what to subtract from
// v's offsets for the array's: on the Go heap, v's whole data when newBuffer
// wraps it without a copy (a window of a page shares the page's bytes: the
// arrays' offsets need not start at 0), else only v's values, rebased
// (newBuffer copies what it is given). max bounds the array's offsets.
func variableData(mem memory.Allocator, v *values, max uint64) ([]byte, uint64) {
	lo, hi := v.offsets[0], v.offsets[v.n]
	if hi <= max && goHeap(mem) && aligned8(v.data) {
		return v.data, 0
	}
	return v.data[lo:hi], lo
}

func aligned8(b []byte) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0
}

// makeArray wraps buffers (whose references it takes over) into an array.
func makeArray(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls int) arrow.Array {
	data := array.NewData(dt, n, bufs, children, nulls, 0)
	releaseBuffers(bufs)
	defer data.Release()
	return array.MakeFromData(data)
}

// zeroValuesOf shapes an all-null page for type dt.
func zeroValuesOf(dt arrow.DataType, n int) *values {
	switch t := dt.(type) {
	case *arrow.DictionaryType: // before FixedWidthDataType, which it implements
		return zeroValuesOf(t.ValueType, n)
	case *arrow.BooleanType:
		return &values{kind: kindBool, n: n, width: 1, data: make([]byte, n)}
	case arrow.FixedWidthDataType:
		return &values{kind: kindFixed, n: n, width: t.BitWidth() / 8, data: make([]byte, n*t.BitWidth()/8)}
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		return &values{kind: kindVariable, n: n, offsets: make([]uint64, n+1)}
	case *arrow.FixedSizeListType:
		child := zeroValuesOf(t.Elem(), n*int(t.Len()))
		if child == nil {
			return nil
		}
		return &values{kind: kindFSL, n: n, dim: int(t.Len()), child: child, itemValid: make([]byte, n*int(t.Len()))}
	}
	return nil
}

// buildDictionary re-encodes materialised values as a dictionary array,
// numbering distinct values in order of first appearance.
func buildDictionary(mem memory.Allocator, t *arrow.DictionaryType, v *values, vb *memory.Buffer, nulls int) (arrow.Array, error) {
	release := func() {
		if vb != nil {
			vb.Release()
		}
	}
	var key func(i int) string
	switch v.kind {
	case kindVariable:
		key = func(i int) string { return string(v.value(i)) }
	case kindFixed:
		key = func(i int) string { return string(v.data[i*v.width : (i+1)*v.width]) }
	default:
		release()
		return nil, fmt.Errorf("dictionary of %s: %w", t.ValueType, ErrUnsupported)
	}
	seen := map[string]int{}
	idx := make([]int64, v.n)
	var first []int
	var validBits []byte
	if vb != nil {
		validBits = vb.Bytes()
	}
	for i := 0; i < v.n; i++ {
		if validBits != nil && !bitutil.BitIsSet(validBits, i) {
			continue
		}
		k := key(i)
		j, ok := seen[k]
		if !ok {
			j = len(first)
			seen[k] = j
			first = append(first, i)
		}
		idx[i] = int64(j)
	}
	dict := emptyLike(v)
	for _, i := range first {
		if err := dict.appendValues(v.slice(i, i+1)); err != nil {
			release()
			return nil, err
		}
	}
	dictArr, err := buildArray(mem, t.ValueType, dict, nil)
	if err != nil {
		release()
		return nil, err
	}
	defer dictArr.Release()
	it, ok := t.IndexType.(arrow.FixedWidthDataType)
	if !ok {
		release()
		return nil, fmt.Errorf("dictionary index type %s: %w", t.IndexType, ErrUnsupported)
	}
	w := it.BitWidth() / 8
	raw := make([]byte, v.n*w)
	for i, x := range idx {
		putUint(raw, i, 8*w, uint64(x))
	}
	data := array.NewDataWithDictionary(t, v.n, []*memory.Buffer{vb, newBuffer(mem, raw)}, nulls, 0, dictArr.Data().(*array.Data))
	defer data.Release()
	releaseBuffers(data.Buffers())
	return array.MakeFromData(data), nil
}
