// Package index reads and writes Lance's scalar indices (BTREE, BITMAP,
// LABEL_LIST; and the inexact ZONEMAP, BLOOMFILTER and NGRAM, whose
// layouts zonemap.go, bloom.go and ngram.go describe) in Lance's own
// format, byte-compatible with the official SDK:
// an index lancecat builds is used by the SDK's planner, and one the SDK
// built is searched here. Package lance registers them (CreateIndex).
//
// # What the SDK writes (measured with scripts/index/sdk-index.mjs and
// scripts/index/dump on tables written by LanceDB 0.31.0 and 0.39.0)
//
// Every index segment is a directory _indices/<uuid>/ of Lance files: 2.1
// files from 0.31.0, 2.2 from 0.39.0 (lancecat writes 2.1, read by both).
// The manifest's index section (Manifest.index_section, an IndexSection
// after the manifest) lists one IndexMetadata per segment:
//
//	uuid            16 random bytes (the directory name, hyphenated)
//	fields          [field id of the column]
//	name            "<column>_idx" by default; segments of one name are
//	                delta indices of one index
//	dataset_version the version the index was trained on (the read version)
//	fragment_bitmap the covered fragment ids: a portable 32-bit roaring
//	                bitmap without run containers (cookie 12346)
//	index_details   Any{type_url: "/lance.table.BTreeIndexDetails" |
//	                "/lance.table.BitmapIndexDetails" |
//	                "/lance.table.LabelListIndexDetails", value: empty}
//	index_version   0 (BTREE, BITMAP), 1 (LABEL_LIST: null lists tracked)
//	created_at      milliseconds since the epoch
//	files (10)      [IndexFile{path, size_bytes}] (newer than our protos:
//	                written as unknown fields)
//
// The transaction is CreateIndex{new_indices: [the segment],
// removed_indices: [the replaced segments]}; drop_index is a CreateIndex
// with only removed_indices. CreateIndex replaces every segment of the same
// name (Lance's build_manifest).
//
// Row ids: the index holds _rowid values, which without stable row ids are
// row addresses (fragment id << 32 | offset). Deleted rows are not indexed
// (the training scan skips them); rows deleted later are filtered by the
// caller with the deletion vectors.
//
// # BTREE
//
// page_data.lance: {values: T nullable, ids: uint64} sorted by value with
// nulls first, ties by row id. Page p is rows [p*batch_size,
// (p+1)*batch_size).
//
// page_lookup.lance: one row per page {min: T, max: T, null_count: uint32,
// page_idx: uint32}; min is the page's first value (null when the page
// holds nulls), max its last; schema metadata batch_size = "4096" and
// range_partitioned = "false" (range-partitioned BTREEs are not read).
//
// # BITMAP
//
// bitmap_page_lookup.lance: {keys: T nullable, bitmaps: binary}, one row per
// distinct value, sorted with the null key first; schema metadata
// lance:index_stats = {"num_bitmaps":N}. Each bitmap is Lance's row-id tree
// map (RowAddrTreeMap::serialize_into):
//
//	u32 LE fragments; per fragment ascending: u32 LE fragment id,
//	u32 LE size (0 = the whole fragment), size bytes of a portable 32-bit
//	roaring bitmap of the row offsets
//
// # LABEL_LIST
//
// The same bitmap_page_lookup.lance over the list elements (0.31.0 sorts
// the keys, 0.39.0 keeps them in first-seen order: readers must not rely on
// the order), plus schema metadata lance:label_list_nulls = "1" naming
// global buffer 1 of the file, the tree map of the rows whose list is null.
// The SDK refuses a version-1 label list index without that key.
//
// # Queries
//
// lance.Dataset.SearchScalarIndex is the lookup for the query engine: it
// picks the index of a column that answers a predicate, searches every
// segment, and answers the live row addresses of the covered fragments
// with the list of covered fragments (the others are scanned and merged,
// as Lance does).
//
// The SDK's explain plan shows an index it uses as
// "ScalarIndexQuery: query=[id = 7]@id_idx(BTree)". Reader.Search answers
// Equals, Range, IsIn and IsNull (BTREE, BITMAP) and HasAny/HasAll
// (LABEL_LIST, array_has_any / array_has_all) with the row ids, exactly.
package index
