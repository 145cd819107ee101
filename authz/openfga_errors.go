package authz

import (
	"context"

	openfga "github.com/openfga/go-sdk"

	nserr "github.com/lancecat/lancecat/errors"
)

// unavailable types an OpenFGA failure. Whatever went wrong, the answer is "cannot decide now"
// (503, code 17), never an allow; a request OpenFGA rejected as malformed is our bug (code 18).
func unavailable(ctx context.Context, doing string, err error) error {
	if ctx.Err() != nil {
		return nserr.ServiceUnavailablef("authorization service did not answer in time while %s: %w", doing, err)
	}
	switch err.(type) {
	case openfga.FgaApiValidationError:
		return nserr.Internalf("authorization service refused the request while %s: %w", doing, err)
	case openfga.FgaApiAuthenticationError:
		return nserr.ServiceUnavailablef("authorization service refused lancecat's credentials while %s: %w", doing, err)
	case openfga.FgaApiNotFoundError:
		return nserr.ServiceUnavailablef("authorization store or model not found while %s (was the store deleted?): %w", doing, err)
	}
	return nserr.ServiceUnavailablef("authorization service unavailable while %s: %w", doing, err)
}

// describe is for messages: the object, or "(none)".
func describe(o Object) string {
	if o.IsZero() {
		return "(none)"
	}
	return o.String()
}
