package errors_test

import (
	stderrors "errors"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz/authzerr"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestProblemCommitted: the translator shows the catalog-authored detail of an operation that
// committed but whose follow-up failed (500 code 18, its own type, a context saying it committed
// and naming the transaction), and never its cause's text; every other 5xx stays redacted. The
// cause here names an internal address, as an OpenFGA failure does.
func TestProblemCommitted(t *testing.T) {
	const secret = "http://openfga.internal:8080"
	outage := fmt.Errorf("%w: dial tcp %s: connection refused", authzerr.ErrUnavailable, secret)
	declared := &nserr.Committed{
		Done: "the batch committed", Transaction: "ns$txn-1",
		Missing: []string{"the owner of the declared table ns$t could not be recorded"},
		Remedy:  "ask an estate admin to drop it", Cause: outage,
	}
	created := &nserr.Committed{Done: "the table ns$u was created", Missing: []string{"its owner could not be recorded"}, Cause: outage}
	for _, tc := range []struct {
		name        string
		err         error
		wantStatus  int
		wantCode    nserr.Code
		wantType    string
		wantDetail  string // the whole detail
		wantContext map[string]string
	}{
		{
			name: "committed with a transaction", err: declared,
			wantStatus: 500, wantCode: nserr.Internal, wantType: nserr.CommittedType,
			wantDetail: "the batch committed (transaction ns$txn-1) and that stands, but the owner of the declared table ns$t could not be recorded. " +
				"Do not retry the request: it committed; ask an estate admin to drop it (request id rid)",
			wantContext: map[string]string{"committed": "true", "transaction_id": "ns$txn-1"},
		},
		{
			// Context wrappers outside it (for logs) do not hide it.
			name: "committed, wrapped", err: fmt.Errorf("creating: %w", created),
			wantStatus: 500, wantCode: nserr.Internal, wantType: nserr.CommittedType,
			wantDetail:  "the table ns$u was created and that stands, but its owner could not be recorded. Do not retry the request: it committed (request id rid)",
			wantContext: map[string]string{"committed": "true"},
		},
		{
			name: "committed, joined first", err: stderrors.Join(created, outage),
			wantStatus: 500, wantCode: nserr.Internal, wantType: nserr.CommittedType,
			wantDetail:  "the table ns$u was created and that stands, but its owner could not be recorded. Do not retry the request: it committed (request id rid)",
			wantContext: map[string]string{"committed": "true"},
		},
		{
			// A plain outage: nothing committed, retry; its detail (the address) is hidden.
			name: "outage", err: outage,
			wantStatus: 503, wantCode: nserr.ServiceUnavailable, wantType: nserr.TypeURI(nserr.ServiceUnavailable),
			wantDetail: "Service unavailable (request id rid; details are in the server log)",
		},
		{
			name: "typed 503 naming an address", err: nserr.ServiceUnavailablef("openfga at %s is down", secret),
			wantStatus: 503, wantCode: nserr.ServiceUnavailable, wantType: nserr.TypeURI(nserr.ServiceUnavailable),
			wantDetail: "Service unavailable (request id rid; details are in the server log)",
		},
		{
			name: "typed 500", err: nserr.Internalf("state at %s", secret),
			wantStatus: 500, wantCode: nserr.Internal, wantType: nserr.TypeURI(nserr.Internal),
			wantDetail: "Internal error (request id rid; details are in the server log)",
		},
		{
			// A coded error outside a Committed decides (it is the nearer claim): only a
			// Committed itself shows its detail, so re-coding one can only hide it.
			name: "a typed 503 wrapping a committed", err: nserr.Wrap(nserr.ServiceUnavailable, created, "again: "+secret),
			wantStatus: 503, wantCode: nserr.ServiceUnavailable, wantType: nserr.TypeURI(nserr.ServiceUnavailable),
			wantDetail: "Service unavailable (request id rid; details are in the server log)",
		},
		{
			name: "4xx detail shown as before", err: nserr.TableNotFoundf("table ns$x not found"),
			wantStatus: 404, wantCode: nserr.TableNotFound, wantType: nserr.TypeURI(nserr.TableNotFound),
			wantDetail: "table ns$x not found",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nserr.ProblemFor(tc.err, "/v1/table/batch-commit", "rid")
			assert.Equal(t, p.Status, tc.wantStatus)
			assert.Equal(t, p.Code, int(tc.wantCode))
			assert.Equal(t, nserr.CodeOf(tc.err), tc.wantCode)
			assert.Equal(t, p.Type, tc.wantType)
			assert.Equal(t, p.Detail, tc.wantDetail)
			assert.Equal(t, p.Error, p.Detail, "the clients show error")
			assert.DeepEqual(t, p.Context, tc.wantContext)
			assert.Assert(t, !cmp.Contains(p.Detail, secret)().Success(), "an internal address leaked: %q", p.Detail)
		})
	}

	// The cause stays reachable for errors.Is and the log.
	assert.Assert(t, stderrors.Is(declared, authzerr.ErrUnavailable))
	assert.Assert(t, nserr.Coded(declared), "Otherwise passes it through")
	// Without a request id the detail is the message alone.
	assert.Equal(t, nserr.ProblemFor(created, "", "").Detail, created.Error())
}
