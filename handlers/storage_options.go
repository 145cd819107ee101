package handlers

import (
	"context"
	"maps"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/ident"
)

// CredentialVendor decides the storage options a caller is handed with a table's location
// (describe_table, declare_table, create_table): the table's connection hints plus whatever
// credentials this caller may have for it. want is the request's vend_credentials (nil: the
// server decides; false: no credentials). The handlers only carry the answer; who gets what is
// the vendor's (governed.CredentialPolicy: STS session credentials scoped to the table's
// prefix, read-only or read-write per the caller's authorization).
type CredentialVendor interface {
	StorageOptions(ctx context.Context, id ident.ID, uri string, base map[string]string, want *bool) (map[string]string, error)
	// Vending is what GET /v1/capabilities says about it.
	Vending() controlapi.CredentialVending
}

// storageOptions are the storage options of the table id at uri for this request's caller: base
// (the table's own) when no vendor is configured, else the vendor's answer; nil when empty, so
// the answer omits the field.
func (s *Server) storageOptions(ctx context.Context, id ident.ID, uri string, base map[string]string, want *bool) (*map[string]string, error) {
	opts := base
	if s.vendor != nil {
		var err error
		if opts, err = s.vendor.StorageOptions(ctx, id, uri, maps.Clone(base), want); err != nil {
			return nil, err
		}
	}
	if len(opts) == 0 {
		return nil, nil
	}
	return &opts, nil
}

// createdWithoutOptions is the answer when vending the storage options of a table that was just
// declared or created (by transaction txn, when the door has one) failed with err: the table
// stands, so it is the committed answer (nserr.Committed: a retry would find it exists), saying
// that describe is how the caller gets its options once vending works again. err (the STS
// failure, which may name internal endpoints) is for the log only.
//
// A refusal a client may read (a 4xx: no credential can be confined to the table) is quoted, as
// its own door would show it.
func createdWithoutOptions(err error, did string, id ident.ID, delimiter, txn string) error {
	missing := "its storage options could not be vended"
	if nserr.CodeOf(err).HTTPStatus() < 500 {
		missing += " (" + err.Error() + ")"
	}
	return &nserr.Committed{
		Done: "the table " + id.Join(delimiter) + " was " + did, Transaction: txn,
		Missing: []string{missing}, Remedy: "describe_table answers them once vending works", Cause: err,
	}
}
