// Package lancefile reads Lance data files (the columnar file format inside
// a Lance dataset's data/ directory), versions 2.0 (footer 0.3) and 2.1.
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
package lancefile
