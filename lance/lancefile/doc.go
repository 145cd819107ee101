// Package lancefile reads Lance data files (the columnar file format inside
// a Lance dataset's data/ directory), versions 2.0 (footer 0.3), 2.1 and
// 2.2.
//
// A file is opened through a [Source], a random-access view of its bytes, so
// the same code reads local files and object-store ranges; only the footer,
// the metadata and the pages a read needs are fetched. Every length and
// offset taken from the file is checked against the file size before it is
// used, so corrupt or hostile input yields an error rather than a panic or a
// huge allocation.
//
// The layout is described in ../../../shared/lance-format/docs/file and, as
// measured on files written by the official implementation, in §5 of the
// lance-format guide. Decoded data is returned as arrow-go records.
//
// [Writer] writes 2.1 or 2.2 files ([WriterOptions].Version) from arrow-go
// records, streaming: each leaf column accumulates about [DefaultPageBytes]
// before its page is encoded and written. Narrow values (< 256 bytes) go
// into mini-block pages (Flat, Variable, FixedSizeList; integers FastLanes
// bit-packed when that saves a tenth; dictionary columns and
// low-cardinality strings as dictionary pages), wide ones into full-zip
// pages (values over 32 KiB zstd-compressed per value), all-null pages carry
// no data. Repetition and definition levels are bit-packed (2.2: or
// run-length encoded, whichever is smaller); a page whose run of null or
// empty lists outgrows one chunk is split at row boundaries. 2.2 differs in
// the mini-block chunk grammar (u32 chunk metadata and buffer sizes,
// has_large_chunk) and compresses the levels of constant pages.
package lancefile
