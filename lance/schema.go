package lance

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// ErrUnsupportedType: a type Lance cannot store (or we cannot map).
var ErrUnsupportedType = lancefile.ErrUnsupportedType

// FieldIDKey is the Arrow field metadata key under which ToArrowSchema
// (with field ids requested) records Lance field ids, and from which
// FromArrowSchema takes them back.
const FieldIDKey = "lance:field_id"

// ArrowExtensionKey is Arrow's extension-type metadata key.
const ArrowExtensionKey = lancefile.ArrowExtensionKey

// ParseLogicalType maps a Lance logical type string of a leaf (anything but struct and list,
// whose children are separate fields) to Arrow.
func ParseLogicalType(lt string) (arrow.DataType, error) { return lancefile.ParseLogicalType(lt) }

// LogicalType is the Lance logical type string of an Arrow type (for struct and list types, the
// parent's string; children are fields).
func LogicalType(dt arrow.DataType) (string, error) { return lancefile.LogicalType(dt) }

// ToArrowSchema converts a flattened Lance schema (pre-order, parent ids)
// and its metadata to an Arrow schema. With withIDs, every field's Lance id
// is kept in its metadata under FieldIDKey.
func ToArrowSchema(fields []*filepb.Field, metadata map[string][]byte, withIDs bool) (*arrow.Schema, error) {
	children := map[int32][]*filepb.Field{}
	for _, f := range fields {
		children[f.GetParentId()] = append(children[f.GetParentId()], f)
	}
	c := toArrow{children: children, withIDs: withIDs}
	var out []arrow.Field
	for _, f := range children[-1] {
		af, err := c.field(f, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, af)
	}
	var md *arrow.Metadata
	if len(metadata) > 0 {
		keys := slices.Sorted(maps.Keys(metadata))
		vals := make([]string, len(keys))
		for i, k := range keys {
			vals[i] = string(metadata[k])
		}
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	return arrow.NewSchema(out, md), nil
}

type toArrow struct {
	children map[int32][]*filepb.Field
	withIDs  bool
}

func (c toArrow) field(f *filepb.Field, depth int) (arrow.Field, error) {
	if depth > 64 {
		return arrow.Field{}, fmt.Errorf("%w: schema nested deeper than 64 levels", ErrCorruptManifest)
	}
	kids := c.children[f.GetId()]
	if slices.Contains(kids, f) {
		return arrow.Field{}, fmt.Errorf("%w: field %d is its own parent", ErrCorruptManifest, f.GetId())
	}
	lt := f.GetLogicalType()
	var dt arrow.DataType
	var err error
	switch base, _, _ := strings.Cut(lt, "."); base {
	case "struct":
		var fs []arrow.Field
		for _, k := range kids {
			af, err := c.field(k, depth+1)
			if err != nil {
				return arrow.Field{}, err
			}
			fs = append(fs, af)
		}
		dt = arrow.StructOf(fs...)
	case "list", "large_list":
		if len(kids) != 1 {
			return arrow.Field{}, fmt.Errorf("%w: list field %q has %d children", ErrCorruptManifest, f.GetName(), len(kids))
		}
		item, err := c.field(kids[0], depth+1)
		if err != nil {
			return arrow.Field{}, err
		}
		if base == "list" {
			dt = arrow.ListOfField(item)
		} else {
			dt = arrow.LargeListOfField(item)
		}
	default:
		dt, err = ParseLogicalType(lt)
		if err != nil {
			return arrow.Field{}, fmt.Errorf("field %q: %w", f.GetName(), err)
		}
	}
	md := map[string]string{}
	for k, v := range f.GetMetadata() {
		md[k] = string(v)
	}
	if lt == "json" {
		md[ArrowExtensionKey] = "lance.json"
	}
	if c.withIDs {
		md[FieldIDKey] = strconv.Itoa(int(f.GetId()))
	}
	return arrow.Field{Name: f.GetName(), Type: dt, Nullable: f.GetNullable(), Metadata: metadataOf(md)}, nil
}

func metadataOf(m map[string]string) arrow.Metadata {
	if len(m) == 0 {
		return arrow.Metadata{}
	}
	keys := slices.Sorted(maps.Keys(m))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return arrow.NewMetadata(keys, vals)
}

// FromArrowSchema converts an Arrow schema to a flattened Lance schema,
// assigning ids in pre-order from nextID to fields without a FieldIDKey
// entry in their metadata (that entry is consumed, not stored).
func FromArrowSchema(s *arrow.Schema, nextID int32) ([]*filepb.Field, map[string][]byte, error) {
	c := &fromArrow{next: nextID, used: map[int32]bool{}}
	for _, f := range s.Fields() {
		if err := c.field(f, -1, 0); err != nil {
			return nil, nil, err
		}
	}
	var md map[string][]byte
	if m := s.Metadata(); m.Len() > 0 {
		md = map[string][]byte{}
		for i, k := range m.Keys() {
			md[k] = []byte(m.Values()[i])
		}
	}
	return c.out, md, nil
}

type fromArrow struct {
	out  []*filepb.Field
	next int32
	used map[int32]bool
}

func (c *fromArrow) field(f arrow.Field, parent int32, depth int) error {
	if depth > 64 {
		return fmt.Errorf("%w: nested deeper than 64 levels", ErrUnsupportedType)
	}
	lt, err := LogicalType(f.Type)
	if err != nil {
		return fmt.Errorf("field %q: %w", f.Name, err)
	}
	id := c.next
	md := map[string][]byte{}
	for i, k := range f.Metadata.Keys() {
		v := f.Metadata.Values()[i]
		switch {
		case k == FieldIDKey:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return fmt.Errorf("field %q: bad %s %q", f.Name, FieldIDKey, v)
			}
			id = int32(n)
		case k == ArrowExtensionKey && v == "lance.json" && f.Type.ID() == arrow.LARGE_BINARY:
			lt = "json"
		default:
			md[k] = []byte(v)
		}
	}
	if c.used[id] {
		return fmt.Errorf("field %q: duplicate field id %d", f.Name, id)
	}
	c.used[id] = true
	c.next = max(c.next, id+1)
	lf := &filepb.Field{Name: f.Name, Id: id, ParentId: parent, LogicalType: lt, Nullable: f.Nullable}
	// Lance still writes the V1 per-field encoding in every manifest, and readers of older
	// datasets consult it, so we keep writing it.
	//lint:ignore SA1019 deprecated for V2 files only; Lance writes it regardless
	lf.Encoding = lancefile.LegacyEncoding(f.Type)
	if len(md) > 0 {
		lf.Metadata = md
	}
	c.out = append(c.out, lf)
	switch t := f.Type.(type) {
	case *arrow.StructType:
		for _, k := range t.Fields() {
			if err := c.field(k, id, depth+1); err != nil {
				return err
			}
		}
	case *arrow.ListType:
		return c.field(t.ElemField(), id, depth+1)
	case *arrow.LargeListType:
		return c.field(t.ElemField(), id, depth+1)
	}
	return nil
}

// ArrowSchema is the version's schema as Arrow (without field ids).
func (v *Version) ArrowSchema() (*arrow.Schema, error) {
	return ToArrowSchema(v.Fields(), v.Manifest().GetSchemaMetadata(), false)
}
