package server

import (
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// A 5xx's log line must carry the cause a typed error wraps (the S3 or OpenFGA failure), not only
// the message written for the client.
func TestCauseChain(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", fmt.Errorf("boom"), "boom"},
		{"typed with cause", nserr.Wrap(nserr.ServiceUnavailable, fmt.Errorf("s3: connection refused"), "warehouse bucket unavailable"),
			"warehouse bucket unavailable: s3: connection refused"},
		{"cause already said", fmt.Errorf("outer: %w", fmt.Errorf("inner")), "outer: inner"},
		{"typed without message", nserr.Wrap(nserr.Internal, fmt.Errorf("disk full"), ""), nserr.Internal.Title() + ": disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, causeChain(tc.err), tc.want)
		})
	}
}
