package handlers

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// TestCreatedWithoutOptions: a table declared or created whose storage options could not be
// vended stands, so the caller gets the committed answer (500 code 18, its detail shown, naming
// the table and the transaction, saying not to retry), never the STS failure's own text (an
// internal endpoint); a refusal a client may read anyway (406) is quoted.
func TestCreatedWithoutOptions(t *testing.T) {
	const endpoint = "https://sts.internal.example:9000"
	sts := nserr.ServiceUnavailablef("vending credentials for s3://b/t: %w", fmt.Errorf("AssumeRole at %s: connection refused", endpoint))
	unscopable := nserr.Unsupportedf("no credential can be confined to s3://b/t; describe it with vend_credentials false")
	for _, tc := range []struct {
		name, did, txn string
		err            error
		want           []string
	}{
		{"declare, STS down", "declared", "", sts, []string{"the table ns$t was declared and that stands, but its storage options could not be vended.",
			"Do not retry the request: it committed; describe_table answers them once vending works"}},
		{"batch declare, STS down", "declared", "ns$txn-1", sts, []string{"the table ns$t was declared (transaction ns$txn-1) and that stands"}},
		{"create, unscopable", "created", "", unscopable, []string{"could not be vended (no credential can be confined to s3://b/t; describe it with vend_credentials false)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nserr.ProblemFor(createdWithoutOptions(tc.err, tc.did, ident.ID{"ns", "t"}, "$", tc.txn), "/v1/table/ns$t/declare", "rid")
			assert.Equal(t, p.Status, 500)
			assert.Equal(t, p.Code, int(nserr.Internal))
			assert.Equal(t, p.Type, nserr.CommittedType)
			for _, w := range tc.want {
				assert.Assert(t, strings.Contains(p.Detail, w), "detail %q lacks %q", p.Detail, w)
			}
			assert.Assert(t, !strings.Contains(p.Detail, endpoint), "the STS failure leaked: %q", p.Detail)
		})
	}
}
