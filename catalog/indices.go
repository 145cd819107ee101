package catalog

import (
	"time"

	"github.com/lancecat/lancecat/lance"
)

// Index requests and descriptions, as create_table_index and list_table_indices speak them.

// CreateIndexRequest is create_table_index / create_table_scalar_index.
type CreateIndexRequest struct {
	Branch string
	Column string
	// IndexType is the client's type name (BTREE, BITMAP, LABEL_LIST;
	// case-insensitive). Vector and full-text types are refused for now.
	IndexType string
	// Name defaults to "<column>_idx".
	Name string
	// Replace replaces an index of the same name (the SDK's default);
	// without it an existing name is TableIndexAlreadyExists.
	Replace bool
	// Vector holds the parameters of the vector index types (IVF_FLAT,
	// IVF_PQ, ...); zero values mean Lance's defaults.
	Vector VectorIndexParams
	// FTS holds the parameters of the full-text (FTS/INVERTED) index; nil
	// fields mean Lance's defaults.
	FTS FTSIndexParams
}

// VectorIndexParams are create_table_index's vector parameters as the
// client sent them (0 / "" when absent: Lance's defaults apply).
type VectorIndexParams struct {
	DistanceType        string
	NumPartitions       int
	NumSubVectors       int
	NumBits             int
	MaxIterations       int
	SampleRate          int
	TargetPartitionSize int
	M                   int
	EfConstruction      int
}

// FTSIndexParams are create_table_index's full-text parameters as the
// client sent them (nil when absent: Lance's defaults apply).
type FTSIndexParams struct {
	WithPosition    *bool
	BaseTokenizer   *string
	Language        *string
	MaxTokenLength  *int
	LowerCase       *bool
	Stem            *bool
	RemoveStopWords *bool
	AsciiFolding    *bool
	// CustomStopWords replaces the language's list (nil: the built-in one).
	CustomStopWords []string
	// The ngram base tokenizer's lengths and prefix_only.
	MinNgramLength, MaxNgramLength *int
	PrefixOnly                     *bool
}

// IndexDescription is one entry of list_table_indices.
type IndexDescription struct {
	Name string
	// UUID is the first segment's.
	UUID string
	// Type is Lance's upper-case type name (BTREE, BITMAP, IVF_PQ's
	// VECTOR, ...); TypeURL the index_details type URL.
	Type, TypeURL string
	Columns       []string
	Segments      int
	IndexVersion  int32
	CreatedAt     *time.Time
	SizeBytes     int64
	// Details is the index's configuration as JSON where a client needs it: a full-text
	// index's tokenizer (Lance's InvertedIndexParams), which Table.tokenize reads.
	Details string
	lance.IndexStats
}
