package index

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// Type is a scalar index type, named as Lance's clients name it.
type Type string

// The scalar index types lancecat reads and writes.
const (
	BTree     Type = "BTREE"
	Bitmap    Type = "BITMAP"
	LabelList Type = "LABEL_LIST"
	// The inexact (zoned and n-gram) types: their answers are a superset
	// the caller rechecks (Type.Exact).
	ZoneMap     Type = "ZONEMAP"
	BloomFilter Type = "BLOOMFILTER"
	NGram       Type = "NGRAM"
)

// The index_details type URLs Lance records in IndexMetadata (an Any whose
// value is an empty message for the three scalar types).
const (
	BTreeDetailsURL     = "/lance.table.BTreeIndexDetails"
	BitmapDetailsURL    = "/lance.table.BitmapIndexDetails"
	LabelListDetailsURL = "/lance.table.LabelListIndexDetails"
	ZoneMapDetailsURL   = "/lance.table.ZoneMapIndexDetails"
	// Lance keeps the bloom filter's details in its newer proto package.
	BloomFilterDetailsURL = "/lance.index.pb.BloomFilterIndexDetails"
	NGramDetailsURL       = "/lance.table.NGramIndexDetails"
)

// The file names inside _indices/<uuid>/.
const (
	PageLookupFile       = "page_lookup.lance"
	PageDataFile         = "page_data.lance"
	BitmapPageLookupFile = "bitmap_page_lookup.lance"
)

// LabelListNullsKey is the schema metadata key of a label list's
// bitmap_page_lookup.lance naming the global buffer that holds the row
// map of its null lists.
const LabelListNullsKey = "lance:label_list_nulls"

// DefaultBatchSize is the rows per BTREE page (Lance's default, recorded
// as page_lookup.lance's batch_size metadata).
const DefaultBatchSize = 4096

// ErrUnsupported: the index (type, value type, layout) is one lancecat
// cannot read or write; the caller falls back to a scan.
var ErrUnsupported = errors.New("lance index: unsupported")

// ErrInvalidParams: index build parameters that no Lance writer accepts
// (vector and full-text builds alike).
var ErrInvalidParams = errors.New("lance index: invalid index parameters")

// ErrCorrupt: an index file does not have the layout Lance gives it.
var ErrCorrupt = errors.New("lance index: corrupt index file")

// ParseType parses a client's index type name (case-insensitive).
func ParseType(s string) (Type, error) {
	switch t := Type(strings.ToUpper(s)); t {
	case BTree, Bitmap, LabelList, ZoneMap, BloomFilter, NGram:
		return t, nil
	case "BLOOM_FILTER":
		return BloomFilter, nil // the remote clients' spelling
	}
	return "", fmt.Errorf("%w: index type %q", ErrUnsupported, s)
}

// DetailsURL is the index_details type URL of t.
func (t Type) DetailsURL() string {
	switch t {
	case BTree:
		return BTreeDetailsURL
	case Bitmap:
		return BitmapDetailsURL
	case LabelList:
		return LabelListDetailsURL
	case ZoneMap:
		return ZoneMapDetailsURL
	case BloomFilter:
		return BloomFilterDetailsURL
	case NGram:
		return NGramDetailsURL
	}
	return ""
}

// Exact: does a search answer exactly the matching rows? The zoned and
// n-gram indices answer a superset (Lance's SearchResult::AtMost) that
// the caller rechecks with the filter.
func (t Type) Exact() bool {
	switch t {
	case ZoneMap, BloomFilter, NGram:
		return false
	}
	return true
}

// UsesAddresses: is the index trained on row addresses (and answers
// them) whatever the dataset's row ids? (The zoned types.)
func (t Type) UsesAddresses() bool { return t == ZoneMap || t == BloomFilter }

// PlanName is the type as Lance's plans name it:
// "ScalarIndexQuery: query=[id = 7]@id_idx(BTree)".
func (t Type) PlanName() string {
	switch t {
	case BTree:
		return "BTree"
	case Bitmap:
		return "Bitmap"
	case LabelList:
		return "LabelList"
	case ZoneMap:
		return "ZoneMap"
	case BloomFilter:
		return "BloomFilter"
	case NGram:
		return "NGram"
	}
	return string(t)
}

// IndexVersion is the index_version Lance records for t (the label list
// index is at version 1 since it tracks null lists).
func (t Type) IndexVersion() int32 {
	if t == LabelList {
		return 1
	}
	return 0
}

// TypeName names the index type of an index_details type URL the way
// LanceDB's index stats do (upper case), for every index type Lance
// writes, including those lancecat cannot read yet; "" when unknown.
// Vector indices are "VECTOR": their kind (IVF_PQ, ...) is in their files.
func TypeName(typeURL string) string {
	name := typeURL[strings.LastIndex(typeURL, "/")+1:]
	name = strings.TrimPrefix(name, "lance.table.")
	name = strings.TrimPrefix(name, "lance.index.pb.")
	switch name {
	case "BTreeIndexDetails":
		return string(BTree)
	case "BitmapIndexDetails":
		return string(Bitmap)
	case "LabelListIndexDetails":
		return string(LabelList)
	case "InvertedIndexDetails":
		return "FTS" // LanceDB's name for Lance's INVERTED index
	case "NGramIndexDetails":
		return "NGRAM"
	case "ZoneMapIndexDetails":
		return "ZONEMAP"
	case "BloomFilterIndexDetails":
		return "BLOOMFILTER"
	case "JsonIndexDetails":
		return "JSON"
	case "FMIndexDetails":
		return "FM"
	case "RTreeIndexDetails":
		return "RTREE"
	case "VectorIndexDetails":
		return "VECTOR"
	}
	return ""
}

// Op is the kind of a Predicate.
type Op int

// The predicates a scalar index answers exactly.
const (
	// Equals: column = Values[0].
	Equals Op = iota
	// Range: Lower < / <= column < / <= Upper (a nil bound is open).
	Range
	// IsIn: column IN (Values...).
	IsIn
	// IsNull: column IS NULL.
	IsNull
	// HasAny: array_has_any(column, Values) (LABEL_LIST).
	HasAny
	// HasAll: array_has_all(column, Values) (LABEL_LIST).
	HasAll
	// Contains: the string column contains every one of Values (strings)
	// as a substring (NGRAM; contains(), LIKE '%a%b%').
	Contains
)

// Bound is one end of a Range.
type Bound struct {
	Value     any
	Inclusive bool
}

// Predicate is what the query engine asks an index. Values are Go values:
// bool, int64 (any signed integer, dates as days, timestamps in the
// column's unit), uint64, float64 (float32 too), string, []byte.
type Predicate struct {
	Op           Op
	Values       []any
	Lower, Upper *Bound
	// FragmentRows, when set, are the physical rows of the version's
	// fragments: a zoned index clips its zones to them and skips zones
	// of other fragments (their rows are not in the version), so the
	// answer is sized by the data, not by what a zone file claims.
	FragmentRows map[uint64]uint64
}

// Reader is an opened scalar index (one segment, _indices/<uuid>/).
type Reader interface {
	Type() Type
	// Search answers p with the row ids the index recorded: row addresses
	// (fragment_id << 32 | offset) on a table without stable row ids.
	// Rows deleted after the index was built may be in the answer; the
	// caller filters them with the deletion vectors, as Lance does.
	Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error)
}
