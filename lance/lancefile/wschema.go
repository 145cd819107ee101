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
		lt, err := LogicalType(f.Type)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		//lint:ignore SA1019 deprecated for V2 files only; Lance writes it regardless
		lf := &filepb.Field{Name: f.Name, Id: next, ParentId: parent, LogicalType: lt, Nullable: f.Nullable, Encoding: LegacyEncoding(f.Type)}
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
		lt, err := LogicalType(f.Type)
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
