package lancefile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// Writer-side schema handling: the Arrow schema becomes Lance's flattened
// field list (pre-order, parent ids), and every leaf becomes one column
// with the path of struct and list nodes above it.

// LanceFields flattens an Arrow schema into Lance fields with ids assigned
// in pre-order from firstID, the way Lance numbers a new table's schema.
// Fixed-size lists are leaves (their item type lives in the logical type).
func LanceFields(s *arrow.Schema, firstID int32) ([]*filepb.Field, error) {
	next := firstID
	var out []*filepb.Field
	var walk func(f arrow.Field, parent int32, depth int) error
	walk = func(f arrow.Field, parent int32, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("field %q nested deeper than %d: %w", f.Name, maxDepth, ErrUnsupported)
		}
		lt, err := logicalTypeOf(f.Type)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		//lint:ignore SA1019 deprecated for V2 files only; Lance writes it regardless
		lf := &filepb.Field{Name: f.Name, Id: next, ParentId: parent, LogicalType: lt, Nullable: f.Nullable, Encoding: legacyEncoding(f.Type)}
		next++
		if f.Metadata.Len() > 0 {
			lf.Metadata = map[string][]byte{}
			for i, k := range f.Metadata.Keys() {
				lf.Metadata[k] = []byte(f.Metadata.Values()[i])
			}
		}
		out = append(out, lf)
		switch t := f.Type.(type) {
		case *arrow.StructType:
			for _, c := range t.Fields() {
				if err := walk(c, lf.Id, depth+1); err != nil {
					return err
				}
			}
		case *arrow.ListType:
			return walk(t.ElemField(), lf.Id, depth+1)
		case *arrow.LargeListType:
			return walk(t.ElemField(), lf.Id, depth+1)
		}
		return nil
	}
	for _, f := range s.Fields() {
		if err := walk(f, -1, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logicalTypeOf is the inverse of parseLogicalType.
func logicalTypeOf(dt arrow.DataType) (string, error) {
	for name, t := range simpleTypes {
		if name != "json" && arrow.TypeEqual(dt, t) {
			return name, nil
		}
	}
	unit := func(u arrow.TimeUnit) string {
		for k, v := range timeUnits {
			if v == u {
				return k
			}
		}
		return "?"
	}
	switch t := dt.(type) {
	case *arrow.TimestampType:
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		}
		return "timestamp:" + unit(t.Unit) + ":" + tz, nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary:%d", t.ByteWidth), nil
	case *arrow.FixedSizeListType:
		if _, nested := t.Elem().(arrow.NestedType); nested {
			return "", fmt.Errorf("fixed_size_list of %s: %w", t.Elem(), ErrUnsupported)
		}
		inner, err := logicalTypeOf(t.Elem())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", inner, t.Len()), nil
	case *arrow.StructType:
		return "struct", nil
	case *arrow.ListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "list.struct", nil
		}
		return "list", nil
	case *arrow.LargeListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "large_list.struct", nil
		}
		return "large_list", nil
	case *arrow.DictionaryType:
		val, err := logicalTypeOf(t.ValueType)
		if err != nil {
			return "", err
		}
		key, err := logicalTypeOf(t.IndexType)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("dict:%s:%s:false", val, key), nil
	}
	return "", fmt.Errorf("arrow type %s: %w", dt, ErrUnsupported)
}

// legacyEncoding is the per-field encoding hint Lance still records.
func legacyEncoding(dt arrow.DataType) filepb.Encoding {
	switch dt.ID() {
	case arrow.STRUCT:
		return filepb.Encoding_NONE
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return filepb.Encoding_VAR_BINARY
	case arrow.DICTIONARY:
		return filepb.Encoding_DICTIONARY
	}
	return filepb.Encoding_PLAIN
}

// planColumns derives the leaf columns of schema, checking that fields (the
// flattened Lance schema the caller records) describes the same tree.
func planColumns(schema *arrow.Schema, fields []*filepb.Field) ([]*column, error) {
	var cols []*column
	next := 0 // position in fields (pre-order)
	var walk func(f arrow.Field, path []pathNode, depth int) error
	walk = func(f arrow.Field, path []pathNode, depth int) error {
		if next >= len(fields) {
			return fmt.Errorf("lance schema has %d fields, arrow schema more: %w", len(fields), ErrUnsupported)
		}
		lf := fields[next]
		next++
		lt, err := logicalTypeOf(f.Type)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		if lf.GetName() != f.Name || (lf.GetLogicalType() != lt && !(lf.GetLogicalType() == "json" && f.Type.ID() == arrow.LARGE_BINARY)) {
			return fmt.Errorf("lance field %q (%s) does not match arrow field %q (%s): %w", lf.GetName(), lf.GetLogicalType(), f.Name, lt, ErrUnsupported)
		}
		switch t := f.Type.(type) {
		case *arrow.StructType:
			if len(t.Fields()) == 0 {
				return fmt.Errorf("field %q: struct without fields: %w", f.Name, ErrUnsupported)
			}
			for i, c := range t.Fields() {
				p := append(append([]pathNode(nil), path...), pathNode{kind: nodeStruct, child: i})
				if err := walk(c, p, depth+1); err != nil {
					return err
				}
			}
			return nil
		case *arrow.ListType:
			return walk(t.ElemField(), append(append([]pathNode(nil), path...), pathNode{kind: nodeList}), depth+1)
		case *arrow.LargeListType:
			return walk(t.ElemField(), append(append([]pathNode(nil), path...), pathNode{kind: nodeList}), depth+1)
		}
		c, err := newColumn(len(cols), lf.GetId(), f.Type, append(append([]pathNode(nil), path...), pathNode{kind: nodeItem}))
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		cols = append(cols, c)
		return nil
	}
	for _, f := range schema.Fields() {
		if err := walk(f, nil, 0); err != nil {
			return nil, err
		}
	}
	if next != len(fields) {
		return nil, fmt.Errorf("lance schema has %d fields, arrow schema %d: %w", len(fields), next, ErrUnsupported)
	}
	return cols, nil
}
