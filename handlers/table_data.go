package handlers

// The table data operations (Arrow IPC bodies and non-JSON answers).

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// InsertIntoTable is POST /v1/table/{id}/insert.
func (s *Server) InsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.InsertIntoTableParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	if err := canonicalEnum("mode", params.Mode, "Append", "Overwrite"); err != nil {
		return err
	}
	return notBacked(c, "InsertIntoTable")
}

// MergeInsertIntoTable is POST /v1/table/{id}/merge_insert (`on`: one or more match fields).
func (s *Server) MergeInsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.MergeInsertIntoTableParams) error {
	if _, _, err := s.mergeInsertRequest(c, params); err != nil {
		return err
	}
	return notBacked(c, "MergeInsertIntoTable")
}

// UpdateTable is POST /v1/table/{id}/update.
func (s *Server) UpdateTable(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableParams) error {
	var req nsapi.UpdateTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "UpdateTable")
}

// DeleteFromTable is POST /v1/table/{id}/delete.
func (s *Server) DeleteFromTable(c echo.Context, _ nsapi.Id, params nsapi.DeleteFromTableParams) error {
	var req nsapi.DeleteFromTableRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DeleteFromTable")
}

// QueryTable is POST /v1/table/{id}/query.
func (s *Server) QueryTable(c echo.Context, _ nsapi.Id, params nsapi.QueryTableParams) error {
	var req nsapi.QueryTableRequest
	if _, _, err := s.decodeQueryRequest(c, params.Delimiter, &req, "order_by"); err != nil {
		return err
	}
	return notBacked(c, "QueryTable")
}

// CountTableRows is POST /v1/table/{id}/count_rows.
func (s *Server) CountTableRows(c echo.Context, _ nsapi.Id, params nsapi.CountTableRowsParams) error {
	var req nsapi.CountTableRowsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "CountTableRows")
}

// CreateTable is POST /v1/table/{id}/create: the body is an Arrow IPC stream (an empty body or
// a stream with a schema and no batches makes an empty table).
func (s *Server) CreateTable(c echo.Context, _ nsapi.Id, params nsapi.CreateTableParams) error {
	id, req, err := s.createTableRequest(c, &params)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "CreateTable")
	}
	if err := s.authorizeCreate(c.Request().Context(), registry.KindTable, id, strOf(req.Mode)); err != nil {
		return err
	}
	nt := namespace.NewTable{Mode: strOf(req.Mode), Location: c.Request().Header.Get("x-lance-table-location")}
	propsJSON := strOf(req.Properties)
	if propsJSON == "" {
		propsJSON = c.Request().Header.Get("x-lance-table-properties")
	}
	if propsJSON != "" {
		if err := json.Unmarshal([]byte(propsJSON), &nt.Properties); err != nil {
			return nserr.InvalidInputf("properties must be a JSON object of strings: %v", err)
		}
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	schema, recs, err := readArrowStream(body)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if schema == nil {
		return nserr.InvalidInputf("the body is empty: an Arrow IPC stream with at least the table's schema is required")
	}
	nt.Schema, nt.Records = schema, recs
	if err := s.checkNotTrashed(c.Request().Context(), id); err != nil {
		return err
	}
	if err := s.checkOverwrite(c, registry.KindTable, id, nt.Mode); err != nil {
		return err
	}
	t, version, err := s.catalog.CreateTable(c.Request().Context(), id, nt)
	if err != nil {
		return err
	}
	resp := nsapi.CreateTableResponse{Location: &t.URI, Properties: &t.Properties}
	if version > 0 {
		resp.Version = ptr(int64(version))
	}
	if len(t.StorageOptions) > 0 {
		resp.StorageOptions = &t.StorageOptions
	}
	return writeJSON(c, resp)
}

// ExplainTableQueryPlan is POST /v1/table/{id}/explain_plan.
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.ExplainTableQueryPlanParams) error {
	var req nsapi.ExplainTableQueryPlanRequest
	if _, _, err := s.decodeQueryRequest(c, params.Delimiter, &req, "query", "order_by"); err != nil {
		return err
	}
	return notBacked(c, "ExplainTableQueryPlan")
}

// AnalyzeTableQueryPlan is POST /v1/table/{id}/analyze_plan.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.AnalyzeTableQueryPlanParams) error {
	var req nsapi.AnalyzeTableQueryPlanRequest
	if _, _, err := s.decodeQueryRequest(c, params.Delimiter, &req, "order_by"); err != nil {
		return err
	}
	return notBacked(c, "AnalyzeTableQueryPlan")
}

// ipcAllocFactor bounds what decoding an Arrow IPC body may allocate, as a multiple of the
// body's size (plus ipcAllocSlack): decoded buffers are the body's bytes, except compressed
// ones, which may grow by about this factor.
const (
	ipcAllocFactor = 16
	ipcAllocSlack  = 1 << 20
)

// errIPCTooLarge is the panic of the capped allocator.
var errIPCTooLarge = errors.New("the Arrow IPC stream decodes to more memory than its size allows")

// cappedAllocator fails (by panicking, which the IPC reader recovers into an error) once the
// bytes it handed out exceed limit: a hostile stream that declares huge buffers cannot make the
// server allocate them.
type cappedAllocator struct {
	inner memory.Allocator
	used  atomic.Int64
	limit int64
}

func (a *cappedAllocator) Allocate(size int) []byte {
	if a.used.Add(int64(size)) > a.limit {
		panic(errIPCTooLarge)
	}
	return a.inner.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if a.used.Add(int64(size-len(b))) > a.limit {
		panic(errIPCTooLarge)
	}
	return a.inner.Reallocate(size, b)
}

func (a *cappedAllocator) Free(b []byte) {
	a.used.Add(-int64(len(b)))
	a.inner.Free(b)
}

// readArrowStream decodes an Arrow IPC stream body, bounded by its size: message metadata and
// bodies cannot claim more than the body holds, decoded buffers are capped, and every record is
// validated (offsets, child lengths) before anything reads its values. An empty body is nil.
func readArrowStream(body []byte) (schema *arrow.Schema, recs []arrow.RecordBatch, err error) {
	if len(body) == 0 {
		return nil, nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			for _, r := range recs {
				r.Release()
			}
			schema, recs, err = nil, nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", p)
		}
	}()
	if err := checkIPCStream(body); err != nil {
		return nil, nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	mem := &cappedAllocator{inner: memory.NewGoAllocator(), limit: int64(len(body))*ipcAllocFactor + ipcAllocSlack}
	limit := int64(len(body))
	r, err := ipc.NewReader(bytes.NewReader(body), ipc.WithAllocator(mem),
		ipc.WithMetadataSizeLimit(min(limit, maxIPCMetadata)), ipc.WithBodySizeLimit(limit), ipc.WithEnsureNativeEndian(true))
	if err != nil {
		return nil, nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	defer r.Release()
	fail := func(err error) (*arrow.Schema, []arrow.RecordBatch, error) {
		for _, rec := range recs {
			rec.Release()
		}
		return nil, nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	schema = undictionary(r.Schema())
	for r.Next() {
		rec := r.RecordBatch()
		cols := make([]arrow.Array, rec.NumCols())
		release := func() {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}
		for i, col := range rec.Columns() {
			if d, ok := col.(*array.Dictionary); ok {
				// Dictionary-encoded columns (JavaScript's Arrow encodes every string column so)
				// are stored with their values.
				if err := validateArray(d.Dictionary(), 0); err != nil {
					release()
					return fail(fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err))
				}
				plain, err := decodeDictionary(d)
				if err != nil {
					release()
					return fail(fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err))
				}
				cols[i] = plain
				continue
			}
			if err := validateArray(col, 0); err != nil {
				release()
				return fail(fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err))
			}
			col.Retain()
			cols[i] = col
		}
		recs = append(recs, array.NewRecordBatch(schema, cols, rec.NumRows()))
		release()
	}
	if err := r.Err(); err != nil {
		return fail(err)
	}
	return schema, recs, nil
}

// undictionary is schema with top-level dictionary types replaced by their value types.
func undictionary(schema *arrow.Schema) *arrow.Schema {
	fields := schema.Fields()
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.DictionaryType); ok {
			fields[i].Type = d.ValueType
		}
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// validateArray checks what the IPC reader leaves unchecked: offsets inside their buffers and
// children long enough for their parents, recursively.
func validateArray(a arrow.Array, depth int) error {
	if depth > 64 {
		return errors.New("nested too deeply")
	}
	if v, ok := a.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			return err
		}
	}
	need := a.Data().Offset() + a.Len()
	switch arr := a.(type) {
	case *array.Struct:
		for i := range arr.NumField() {
			f := arr.Field(i)
			if f.Data().Offset()+f.Len() < need {
				return fmt.Errorf("struct child %d has %d values, its parent needs %d", i, f.Len(), need)
			}
			if err := validateArray(f, depth+1); err != nil {
				return err
			}
		}
	case *array.FixedSizeList:
		n := int(arr.DataType().(*arrow.FixedSizeListType).Len())
		if vals := arr.ListValues(); vals.Len() < need*n {
			return fmt.Errorf("fixed-size list values has %d values, its parent needs %d", vals.Len(), need*n)
		} else if err := validateArray(vals, depth+1); err != nil {
			return err
		}
	case array.ListLike:
		if err := validateArray(arr.ListValues(), depth+1); err != nil {
			return err
		}
	case *array.Dictionary:
		return errors.New("dictionary-encoded columns are not supported")
	}
	return nil
}

// decodeDictionary is d's values in row order (indices are checked against the dictionary).
func decodeDictionary(d *array.Dictionary) (arrow.Array, error) {
	dict := d.Dictionary()
	mem := memory.NewGoAllocator()
	index := func(i int) (int, error) {
		idx := d.GetValueIndex(i)
		if idx < 0 || idx >= dict.Len() {
			return 0, fmt.Errorf("dictionary index %d out of range [0, %d)", idx, dict.Len())
		}
		return idx, nil
	}
	if strs, ok := dict.(*array.String); ok {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range d.Len() {
			if d.IsNull(i) {
				b.AppendNull()
				continue
			}
			idx, err := index(i)
			if err != nil {
				return nil, err
			}
			if strs.IsNull(idx) {
				b.AppendNull()
			} else {
				b.Append(strs.Value(idx))
			}
		}
		return b.NewArray(), nil
	}
	parts := make([]arrow.Array, 0, d.Len())
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := range d.Len() {
		if d.IsNull(i) {
			parts = append(parts, array.MakeArrayOfNull(mem, dict.DataType(), 1))
			continue
		}
		idx, err := index(i)
		if err != nil {
			return nil, err
		}
		parts = append(parts, array.NewSlice(dict, int64(idx), int64(idx+1)))
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, dict.DataType(), 0), nil
	}
	return array.Concatenate(parts, mem)
}

// The IPC reader trusts the flatbuffer metadata of each message: a vector length it reads is
// handed to make() before anything checks it against the bytes present, so a forged schema of a
// few bytes could ask for gigabytes. checkIPCStream walks the stream's framing and verifies every
// table, vector and string of every message's metadata lies inside that metadata (and every body
// inside the stream) before the reader sees it.

// maxIPCMetadata bounds one message's metadata (schemas and batch headers are small).
const maxIPCMetadata = 4 << 20

func checkIPCStream(body []byte) error {
	for pos := 0; pos < len(body); {
		if len(body)-pos < 4 {
			return errors.New("truncated message length")
		}
		n := binary.LittleEndian.Uint32(body[pos:])
		pos += 4
		if n == 0xFFFFFFFF {
			if len(body)-pos < 4 {
				return errors.New("truncated message length")
			}
			n = binary.LittleEndian.Uint32(body[pos:])
			pos += 4
		}
		if n == 0 {
			return nil // end of stream
		}
		if n > maxIPCMetadata || int(n) > len(body)-pos {
			return fmt.Errorf("message metadata of %d bytes does not fit the stream", n)
		}
		bodyLen, err := checkIPCMessage(fbuf(body[pos : pos+int(n)]))
		if err != nil {
			return err
		}
		pos += int(n)
		if bodyLen < 0 || bodyLen > int64(len(body)-pos) {
			return fmt.Errorf("message body of %d bytes does not fit the stream", bodyLen)
		}
		pos += int(bodyLen)
	}
	return nil
}

// fbuf is one flatbuffer; fbTable is a table in it.
type fbuf []byte

type fbTable struct {
	b       fbuf
	pos, vt int
	vtLen   int
}

var errFlatbuffer = errors.New("malformed message metadata")

func (b fbuf) u32(p int) (uint32, error) {
	if p < 0 || p+4 > len(b) {
		return 0, errFlatbuffer
	}
	return binary.LittleEndian.Uint32(b[p:]), nil
}

func (b fbuf) table(p int) (fbTable, error) {
	soff, err := b.u32(p)
	if err != nil {
		return fbTable{}, err
	}
	vt := p - int(int32(soff))
	if vt < 0 || vt+4 > len(b) {
		return fbTable{}, errFlatbuffer
	}
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	tblLen := int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > len(b) || p+tblLen > len(b) {
		return fbTable{}, errFlatbuffer
	}
	t := fbTable{b: b, pos: p, vt: vt, vtLen: vtLen}
	for slot := 0; 4+2*slot < vtLen; slot++ {
		if off := t.offset(slot); off != 0 && off >= tblLen {
			return fbTable{}, errFlatbuffer
		}
	}
	return t, nil
}

// offset is slot's offset inside the table (0: absent).
func (t fbTable) offset(slot int) int {
	o := 4 + 2*slot
	if o+2 > t.vtLen {
		return 0
	}
	return int(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
}

// ref follows slot's uoffset; ok is false when the slot is absent.
func (t fbTable) ref(slot int) (int, bool, error) {
	off := t.offset(slot)
	if off == 0 {
		return 0, false, nil
	}
	p := t.pos + off
	u, err := t.b.u32(p)
	if err != nil {
		return 0, false, err
	}
	target := p + int(u)
	if target < 0 || target >= len(t.b) {
		return 0, false, errFlatbuffer
	}
	return target, true, nil
}

func (t fbTable) sub(slot int) (fbTable, bool, error) {
	p, ok, err := t.ref(slot)
	if !ok || err != nil {
		return fbTable{}, false, err
	}
	s, err := t.b.table(p)
	return s, err == nil, err
}

// vector checks slot's vector of n elements of size each and returns where they start.
func (t fbTable) vector(slot, size int) (start, n int, err error) {
	p, ok, err := t.ref(slot)
	if !ok || err != nil {
		return 0, 0, err
	}
	l, err := t.b.u32(p)
	if err != nil {
		return 0, 0, err
	}
	if int64(l)*int64(size) > int64(len(t.b)-p-4) {
		return 0, 0, errFlatbuffer
	}
	return p + 4, int(l), nil
}

func (t fbTable) scalar(slot, size int) ([]byte, error) {
	off := t.offset(slot)
	if off == 0 {
		return nil, nil
	}
	p := t.pos + off
	if p+size > len(t.b) {
		return nil, errFlatbuffer
	}
	return t.b[p : p+size], nil
}

// tables checks a vector of tables, calling each on every element.
func (t fbTable) tables(slot int, each func(fbTable) error) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + 4*i
		u, _ := t.b.u32(p)
		e, err := t.b.table(p + int(u))
		if err != nil {
			return err
		}
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

func keyValues(t fbTable, slot int) error {
	return t.tables(slot, func(kv fbTable) error {
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		_, _, err := kv.vector(1, 1)
		return err
	})
}

// checkIPCMessage verifies a Message (Schema, RecordBatch or DictionaryBatch) and returns its
// body length.
func checkIPCMessage(b fbuf) (int64, error) {
	root, err := b.u32(0)
	if err != nil {
		return 0, err
	}
	msg, err := b.table(int(root))
	if err != nil {
		return 0, err
	}
	var bodyLen int64
	if v, err := msg.scalar(3, 8); err != nil {
		return 0, err
	} else if v != nil {
		bodyLen = int64(binary.LittleEndian.Uint64(v))
	}
	if err := keyValues(msg, 4); err != nil {
		return 0, err
	}
	typ, err := msg.scalar(1, 1)
	if err != nil || typ == nil {
		return 0, errFlatbuffer
	}
	header, ok, err := msg.sub(2)
	if err != nil || !ok {
		return 0, errFlatbuffer
	}
	switch typ[0] {
	case 1: // Schema
		err = checkSchema(header)
	case 2: // DictionaryBatch
		var data fbTable
		if data, ok, err = header.sub(1); err == nil && ok {
			err = checkRecordBatch(data)
		}
	case 3: // RecordBatch
		err = checkRecordBatch(header)
	default:
		err = fmt.Errorf("message type %d is not a schema or a record batch", typ[0])
	}
	return bodyLen, err
}

func checkSchema(s fbTable) error {
	if _, _, err := s.vector(3, 8); err != nil {
		return err
	}
	if err := keyValues(s, 2); err != nil {
		return err
	}
	return s.tables(1, func(f fbTable) error { return checkField(f, 0) })
}

func checkField(f fbTable, depth int) error {
	if depth > 64 {
		return errors.New("fields nested too deeply")
	}
	if _, _, err := f.vector(0, 1); err != nil { // name
		return err
	}
	typ, ok, err := f.sub(3)
	if err != nil || !ok {
		return errFlatbuffer
	}
	if tt, err := f.scalar(2, 1); err != nil {
		return err
	} else if tt != nil && tt[0] == 14 { // Union: typeIds
		if _, _, err := typ.vector(1, 4); err != nil {
			return err
		}
	}
	if dict, ok, err := f.sub(4); err != nil {
		return err
	} else if ok {
		if _, _, err := dict.sub(1); err != nil {
			return err
		}
	}
	if err := keyValues(f, 6); err != nil {
		return err
	}
	return f.tables(5, func(c fbTable) error { return checkField(c, depth+1) })
}

func checkRecordBatch(r fbTable) error {
	for slot, size := range map[int]int{1: 16, 2: 16, 4: 8} { // nodes, buffers, variadic counts
		if _, _, err := r.vector(slot, size); err != nil {
			return err
		}
	}
	_, _, err := r.sub(3) // compression
	return err
}
