package lancefile

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// field is one node of the file's schema tree. Lance stores the schema as a
// flat pre-order list linked by parent ids; decoding walks the tree.
type field struct {
	pb       *filepb.Field
	arrow    arrow.Field
	children []*field
	// column is the first column of this node. In 2.0 every node has a
	// column of its own; in 2.1 only leaves do (structs and lists are folded
	// into the leaves' repetition and definition levels).
	column int
}

// buildSchema links the flat field list into trees (one per top-level
// field) and derives the Arrow types.
func buildSchema(fields []*filepb.Field, meta map[string][]byte) ([]*field, *arrow.Schema, error) {
	byID := make(map[int32]*field, len(fields))
	var roots []*field
	for _, pf := range fields {
		n := &field{pb: pf}
		if _, dup := byID[pf.GetId()]; dup {
			return nil, nil, fmt.Errorf("schema: duplicate field id %d: %w", pf.GetId(), ErrCorrupt)
		}
		byID[pf.GetId()] = n
		if pf.GetParentId() < 0 {
			roots = append(roots, n)
			continue
		}
		// Pre-order means a parent always precedes its children, which also
		// rules out cycles.
		parent, ok := byID[pf.GetParentId()]
		if !ok {
			return nil, nil, fmt.Errorf("schema: field %q has unknown parent %d: %w", pf.GetName(), pf.GetParentId(), ErrCorrupt)
		}
		parent.children = append(parent.children, n)
	}
	arrowFields := make([]arrow.Field, len(roots))
	for i, r := range roots {
		if err := r.resolve(0); err != nil {
			return nil, nil, err
		}
		arrowFields[i] = r.arrow
	}
	var md *arrow.Metadata
	if len(meta) > 0 {
		keys := make([]string, 0, len(meta))
		vals := make([]string, 0, len(meta))
		for k, v := range meta {
			keys = append(keys, k)
			vals = append(vals, string(v))
		}
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	return roots, arrow.NewSchema(arrowFields, md), nil
}

// maxDepth bounds nesting so a hostile schema cannot exhaust the stack.
const maxDepth = 64

func (n *field) resolve(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema nested deeper than %d: %w", maxDepth, ErrCorrupt)
	}
	for _, c := range n.children {
		if err := c.resolve(depth + 1); err != nil {
			return err
		}
	}
	lt := n.pb.GetLogicalType()
	var dt arrow.DataType
	switch {
	case lt == "struct":
		fs := make([]arrow.Field, len(n.children))
		for i, c := range n.children {
			fs[i] = c.arrow
		}
		dt = arrow.StructOf(fs...)
	case lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct":
		if len(n.children) != 1 {
			return fmt.Errorf("schema: list %q has %d children: %w", n.pb.GetName(), len(n.children), ErrCorrupt)
		}
		if strings.HasPrefix(lt, "large_") {
			dt = arrow.LargeListOfField(n.children[0].arrow)
		} else {
			dt = arrow.ListOfField(n.children[0].arrow)
		}
	default:
		if len(n.children) != 0 {
			return fmt.Errorf("schema: %s field %q has children: %w", lt, n.pb.GetName(), ErrCorrupt)
		}
		var err error
		if dt, err = ParseLogicalType(lt); err != nil {
			return fmt.Errorf("schema: field %q: %w", n.pb.GetName(), err)
		}
	}
	n.arrow = arrow.Field{Name: n.pb.GetName(), Type: dt, Nullable: n.pb.GetNullable()}
	if len(n.pb.GetMetadata()) > 0 {
		keys := make([]string, 0, len(n.pb.GetMetadata()))
		vals := make([]string, 0, len(n.pb.GetMetadata()))
		for k, v := range n.pb.GetMetadata() {
			keys = append(keys, k)
			vals = append(vals, string(v))
		}
		n.arrow.Metadata = arrow.NewMetadata(keys, vals)
	}
	return nil
}
