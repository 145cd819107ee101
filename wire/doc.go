// Package wire turns the Lance Namespace spec's JSON and Arrow request bodies into the catalog's request
// types: a query body into a query.Request and the version it reads at, a merge-insert body into a
// dml.MergeInsert, a strict spec model decoded with its unknown fields named. It is the translation Lance's
// rest_adapter does before its one backend call, kept out of handlers so that handlers stay transport (read
// the body once, one call into the catalog, encode) and import none of the packages that do the work.
//
// Errors are nserr.InvalidInputf and friends, so the one error table maps them to the spec's 400s.
package wire
