package index

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Builder trains one scalar index segment from the column's values and the
// row ids they belong to (row addresses without stable row ids).
type Builder interface {
	// Add takes one batch: values[i] is the value of row ids[i]. Add keeps
	// no reference to values after it returns.
	Add(values arrow.Array, ids []uint64) error
	// Finish writes the index files into st.
	Finish(ctx context.Context, st Store) ([]File, error)
}

// NewBuilder starts a segment of type t over values of type dt.
func NewBuilder(t Type, dt arrow.DataType, mem memory.Allocator) (Builder, error) {
	return nil, fmt.Errorf("%w: TODO build %s", ErrUnsupported, t)
}

// Open opens the segment of type t stored in st.
func Open(ctx context.Context, t Type, st Store) (Reader, error) {
	return nil, fmt.Errorf("%w: TODO open %s", ErrUnsupported, t)
}
