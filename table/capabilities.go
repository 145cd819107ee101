package table

import (
	"slices"

	"github.com/lancecat/lancecat/lance/index"
)

// builtIndexTypes are the vector and full-text index types (of vectorIndexTypes, ftsIndexTypes)
// CreateIndex builds today; the scalar ones are whatever lance/index parses. The vector and
// full-text index work adds its types here as they land: TestIndexTypesMatchCreateIndex fails
// while a type CreateIndex builds is missing here, or one listed here answers 406.
var builtIndexTypes = map[string]bool{
	"IVF_FLAT": true, "IVF_PQ": true, "IVF_SQ": true, "VECTOR": true,
	"IVF_HNSW_FLAT": true, "IVF_HNSW_SQ": true, "IVF_HNSW_PQ": true, // VECTOR is LanceDB's default: IVF_PQ
	"FTS": true, "INVERTED": true,
}

// scalarCandidates are the scalar index type names Lance's clients use; lance/index decides
// which of them lancecat builds (index.ParseType).
var scalarCandidates = []string{"BTREE", "BITMAP", "LABEL_LIST", "ZONEMAP", "NGRAM", "BLOOMFILTER"}

// IndexTypes are the index types create_table_index builds, sorted (GET /v1/capabilities).
func IndexTypes() []string {
	var out []string
	for _, t := range scalarCandidates {
		if _, err := index.ParseType(t); err == nil {
			out = append(out, t)
		}
	}
	for t := range vectorIndexTypes {
		if builtIndexTypes[t] {
			out = append(out, t)
		}
	}
	for t := range ftsIndexTypes {
		if builtIndexTypes[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
