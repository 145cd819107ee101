package namespace

// Reading the __manifest table: every fragment's data files are decoded with lancefile, deletion
// vectors applied, and the live rows indexed by object_id. A decoded snapshot is cached per
// manifest version; a fragment whose files did not change is reused across versions, so a new
// version costs only its new fragments.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// ManifestTable is the directory of the manifest table under the root.
const ManifestTable = "__manifest"

// The manifest's own columns; any others are preserved but not interpreted.
const (
	colObjectID    = "object_id"
	colObjectType  = "object_type"
	colLocation    = "location"
	colMetadata    = "metadata"
	colBaseObjects = "base_objects"
)

// Object types of manifest rows.
const (
	TypeNamespace    = "namespace"
	TypeTable        = "table"
	TypeTableVersion = "table_version"
)

// manifestSchema is the schema of a manifest table lancecat creates, the same as LanceDB's.
func manifestSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: colObjectID, Type: arrow.BinaryTypes.String},
		{Name: colObjectType, Type: arrow.BinaryTypes.String},
		{Name: colLocation, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: colMetadata, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: colBaseObjects, Type: arrow.ListOfField(arrow.Field{Name: colObjectID, Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	}, nil)
}

// row is one live row of the manifest table.
type row struct {
	ObjectID    string
	Type        string
	Location    *string
	Metadata    *string
	BaseObjects []string // nil when null
	// frag and index locate the row, for deleting it and for copying columns we do not know.
	frag  *fragData
	index int
}

// fragData is one decoded fragment: its rows (all physical rows, in the manifest schema's
// top-level column order) and which of them are live.
type fragData struct {
	frag *tablepb.DataFragment
	key  string // identity of the files it was decoded from
	rec  arrow.RecordBatch
	live []int
}

// snapshot is the manifest table at one version.
type snapshot struct {
	ver    *lance.Version // nil: the manifest table does not exist yet
	schema *arrow.Schema  // top-level columns of the table
	frags  map[uint64]*fragData
	rows   map[string]*row
	// children maps a parent object id ("" for the root) to its direct children, sorted by name.
	children map[string][]*row
	// locations are the table locations the manifest references (compatibility mode hides
	// root directories that back a manifest entry under another name).
	locations map[string]bool
}

func (s *snapshot) version() uint64 {
	if s.ver == nil {
		return 0
	}
	return s.ver.Number()
}

// properties is the table metadata of the manifest: the root namespace's properties.
func (s *snapshot) properties() map[string]string {
	if s.ver == nil {
		return map[string]string{}
	}
	out := make(map[string]string, len(s.ver.Manifest().GetTableMetadata()))
	for k, v := range s.ver.Manifest().GetTableMetadata() {
		out[k] = v
	}
	return out
}

// fragKey identifies what a fragment's decoded rows depend on: its data files and deletion file.
func fragKey(f *tablepb.DataFragment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%d", f.GetId(), f.GetPhysicalRows())
	for _, df := range f.GetFiles() {
		fmt.Fprintf(&b, "|%s", df.GetPath())
	}
	if d := f.GetDeletionFile(); d != nil {
		fmt.Fprintf(&b, "|del:%d-%d-%d", d.GetReadVersion(), d.GetId(), d.GetFileType())
	}
	return b.String()
}

// loadSnapshot decodes version ver of the manifest table, reusing fragments of prev.
func loadSnapshot(ctx context.Context, store storage.Reader, ver *lance.Version, prev *snapshot) (*snapshot, error) {
	m := ver.Manifest()
	schema, err := lance.ToArrowSchema(m.GetFields(), nil, false)
	if err != nil {
		return nil, fmt.Errorf("namespace: __manifest schema: %w", err)
	}
	for _, name := range []string{colObjectID, colObjectType} {
		if f, ok := schema.FieldsByName(name); !ok || f[0].Type.ID() != arrow.STRING {
			return nil, fmt.Errorf("namespace: __manifest has no string column %q", name)
		}
	}
	s := &snapshot{ver: ver, schema: schema, frags: map[uint64]*fragData{}}
	for _, f := range m.GetFragments() {
		key := fragKey(f)
		if prev != nil && schemaEqual(prev.schema, schema) {
			if old := prev.frags[f.GetId()]; old != nil && old.key == key {
				s.frags[f.GetId()] = old
				continue
			}
		}
		fd, err := readFragment(ctx, store, schema, f)
		if err != nil {
			return nil, err
		}
		fd.key = key
		s.frags[f.GetId()] = fd
	}
	if err := s.index(); err != nil {
		return nil, err
	}
	return s, nil
}

func schemaEqual(a, b *arrow.Schema) bool { return a != nil && b != nil && a.Equal(b) }

// readFragment decodes every physical row of one fragment into the top-level columns of schema.
func readFragment(ctx context.Context, store storage.Reader, schema *arrow.Schema, f *tablepb.DataFragment) (*fragData, error) {
	n := int64(f.GetPhysicalRows())
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, df := range f.GetFiles() {
		if df.GetBaseId() != 0 {
			return nil, fmt.Errorf("namespace: __manifest fragment %d lives in another base path: %w", f.GetId(), errors.ErrUnsupported)
		}
		key := "data/" + df.GetPath()
		size := int64(df.GetFileSizeBytes())
		if size == 0 {
			info, err := store.Stat(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("namespace: __manifest %s: %w", key, err)
			}
			size = info.Size
		}
		r, err := lancefile.Open(ctx, lancefile.NewObjectSource(rangeGetter{store}, key, size))
		if err != nil {
			return nil, fmt.Errorf("namespace: __manifest %s: %w", key, err)
		}
		rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: -1})
		if err != nil {
			return nil, fmt.Errorf("namespace: __manifest %s: %w", key, err)
		}
		if n == 0 {
			n = rec.NumRows()
		}
		if rec.NumRows() != n {
			rec.Release()
			return nil, fmt.Errorf("namespace: __manifest %s holds %d rows, fragment %d has %d", key, rec.NumRows(), f.GetId(), n)
		}
		for i, af := range rec.Schema().Fields() {
			idx := schema.FieldIndices(af.Name)
			if len(idx) == 0 || cols[idx[0]] != nil {
				continue // a column dropped from the schema, or already read from a newer file
			}
			col := rec.Column(i)
			if !arrow.TypeEqual(col.DataType(), schema.Field(idx[0]).Type) {
				rec.Release()
				return nil, fmt.Errorf("namespace: __manifest %s column %s is %s, the schema says %s", key, af.Name, col.DataType(), schema.Field(idx[0]).Type)
			}
			col.Retain()
			cols[idx[0]] = col
		}
		rec.Release()
	}
	for i := range cols {
		if cols[i] == nil { // a column no data file of this fragment holds: null
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(i).Type, int(n))
		}
	}
	fd := &fragData{frag: f, rec: array.NewRecordBatch(schema, cols, n)}
	var dv *lance.DeletionVector
	if del := f.GetDeletionFile(); del != nil {
		var err error
		if dv, err = lance.ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
			return nil, fmt.Errorf("namespace: __manifest: %w", err)
		}
	}
	for i := 0; i < int(n); i++ {
		if dv == nil || !dv.Contains(uint32(i)) {
			fd.live = append(fd.live, i)
		}
	}
	return fd, nil
}

// index builds the lookups of a snapshot from its fragments.
func (s *snapshot) index() error {
	s.rows = map[string]*row{}
	s.children = map[string][]*row{}
	s.locations = map[string]bool{}
	ids := slices.Sorted(func(yield func(uint64) bool) {
		for id := range s.frags {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		fd := s.frags[id]
		cols := fd.rec.Columns()
		get := func(name string) arrow.Array {
			if idx := s.schema.FieldIndices(name); len(idx) > 0 {
				return cols[idx[0]]
			}
			return nil
		}
		oid := get(colObjectID).(*array.String)
		otype := get(colObjectType).(*array.String)
		loc, _ := get(colLocation).(*array.String)
		meta, _ := get(colMetadata).(*array.String)
		base, _ := get(colBaseObjects).(*array.List)
		for _, i := range fd.live {
			if oid.IsNull(i) {
				continue
			}
			r := &row{ObjectID: oid.Value(i), Type: otype.Value(i), frag: fd, index: i}
			if loc != nil && loc.IsValid(i) {
				v := loc.Value(i)
				r.Location = &v
			}
			if meta != nil && meta.IsValid(i) {
				v := meta.Value(i)
				r.Metadata = &v
			}
			if base != nil && base.IsValid(i) {
				if vals, ok := base.ListValues().(*array.String); ok {
					start, end := base.ValueOffsets(i)
					r.BaseObjects = []string{}
					for j := start; j < end; j++ {
						r.BaseObjects = append(r.BaseObjects, vals.Value(int(j)))
					}
				}
			}
			if _, dup := s.rows[r.ObjectID]; dup {
				// The primary key is unenforced in the format; a duplicate written by another
				// writer is served as its first occurrence.
				continue
			}
			s.rows[r.ObjectID] = r
			if r.Type == TypeTable && r.Location != nil {
				s.locations[*r.Location] = true
			}
			if r.Type == TypeNamespace || r.Type == TypeTable {
				parent := parentKey(r.ObjectID)
				s.children[parent] = append(s.children[parent], r)
			}
		}
	}
	for _, kids := range s.children {
		slices.SortFunc(kids, func(a, b *row) int { return strings.Compare(a.ObjectID, b.ObjectID) })
	}
	return nil
}

// parentKey is the object id of an object's parent ("" for the root).
func parentKey(objectID string) string {
	if i := strings.LastIndex(objectID, Delimiter); i >= 0 {
		return objectID[:i]
	}
	return ""
}

// rangeGetter adapts an object store to what lancefile reads through.
type rangeGetter struct{ store storage.Reader }

func (g rangeGetter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	rc, err := g.store.GetRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
