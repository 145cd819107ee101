package authz

import (
	"context"
	"fmt"

	openfga "github.com/openfga/go-sdk"

	"github.com/lancecat/lancecat/authz/authzerr"
)

// unavailable translates an OpenFGA failure into authzerr's sentinels (the errors table answers
// 503, code 17, for ErrUnavailable and 18 for ErrRefused). Whatever went wrong, the answer is
// "cannot decide now", never an allow; a request OpenFGA rejected as malformed is our bug.
func unavailable(ctx context.Context, doing string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: it did not answer in time while %s: %w", authzerr.ErrUnavailable, doing, err)
	}
	switch err.(type) {
	case openfga.FgaApiValidationError:
		return fmt.Errorf("%w while %s: %w", authzerr.ErrRefused, doing, err)
	case openfga.FgaApiAuthenticationError:
		return fmt.Errorf("%w: it refused lancecat's credentials while %s: %w", authzerr.ErrUnavailable, doing, err)
	case openfga.FgaApiNotFoundError:
		return fmt.Errorf("%w: store or model not found while %s (was the store deleted?): %w", authzerr.ErrUnavailable, doing, err)
	}
	return fmt.Errorf("%w while %s: %w", authzerr.ErrUnavailable, doing, err)
}

// describe is for messages: the object, or "(none)".
func describe(o Object) string {
	if o.IsZero() {
		return "(none)"
	}
	return o.String()
}
