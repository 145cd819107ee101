package errors_test

import (
	stderrors "errors"
	"fmt"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// TestContractPinsAllCodes pins the whole contract: a change to any code, name or status breaks it.
func TestContractPinsAllCodes(t *testing.T) {
	want := []struct {
		code   nserr.Code
		name   string
		status int
	}{
		{0, "Unsupported", 406},
		{1, "NamespaceNotFound", 404},
		{2, "NamespaceAlreadyExists", 409},
		{3, "NamespaceNotEmpty", 409},
		{4, "TableNotFound", 404},
		{5, "TableAlreadyExists", 409},
		{6, "TableIndexNotFound", 404},
		{7, "TableIndexAlreadyExists", 409},
		{8, "TableTagNotFound", 404},
		{9, "TableTagAlreadyExists", 409},
		{10, "TransactionNotFound", 404},
		{11, "TableVersionNotFound", 404},
		{12, "TableColumnNotFound", 404},
		{13, "InvalidInput", 400},
		{14, "ConcurrentModification", 409},
		{15, "PermissionDenied", 403},
		{16, "Unauthenticated", 401},
		{17, "ServiceUnavailable", 503},
		{18, "Internal", 500},
		{19, "InvalidTableState", 409},
		{20, "TableSchemaValidationError", 400},
		{21, "Throttling", 429},
		{22, "TableBranchNotFound", 404},
		{23, "TableBranchAlreadyExists", 409},
	}
	assert.Equal(t, len(nserr.Codes()), 24)
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			assert.Equal(t, nserr.Codes()[i], w.code)
			assert.Equal(t, w.code.Name(), w.name)
			assert.Equal(t, w.code.HTTPStatus(), w.status)
			p := nserr.ProblemFor(nserr.Newf(w.code, "boom %d", i), "/v1/x", "rid")
			assert.Equal(t, p.Code, int(w.code))
			assert.Equal(t, p.Status, w.status)
			assert.Equal(t, p.Type, "urn:lance-namespace:error:"+w.name)
		})
	}
}

func TestConstructorsMatchSentinels(t *testing.T) {
	cases := []struct {
		err      error
		sentinel error
	}{
		{nserr.Unsupportedf("x"), nserr.ErrUnsupported},
		{nserr.NamespaceNotFoundf("x"), nserr.ErrNamespaceNotFound},
		{nserr.NamespaceAlreadyExistsf("x"), nserr.ErrNamespaceAlreadyExists},
		{nserr.NamespaceNotEmptyf("x"), nserr.ErrNamespaceNotEmpty},
		{nserr.TableNotFoundf("x"), nserr.ErrTableNotFound},
		{nserr.TableAlreadyExistsf("x"), nserr.ErrTableAlreadyExists},
		{nserr.TableIndexNotFoundf("x"), nserr.ErrTableIndexNotFound},
		{nserr.TableIndexAlreadyExistsf("x"), nserr.ErrTableIndexAlreadyExists},
		{nserr.TableTagNotFoundf("x"), nserr.ErrTableTagNotFound},
		{nserr.TableTagAlreadyExistsf("x"), nserr.ErrTableTagAlreadyExists},
		{nserr.TransactionNotFoundf("x"), nserr.ErrTransactionNotFound},
		{nserr.TableVersionNotFoundf("x"), nserr.ErrTableVersionNotFound},
		{nserr.TableColumnNotFoundf("x"), nserr.ErrTableColumnNotFound},
		{nserr.InvalidInputf("x"), nserr.ErrInvalidInput},
		{nserr.ConcurrentModificationf("x"), nserr.ErrConcurrentModification},
		{nserr.PermissionDeniedf("x"), nserr.ErrPermissionDenied},
		{nserr.Unauthenticatedf("x"), nserr.ErrUnauthenticated},
		{nserr.ServiceUnavailablef("x"), nserr.ErrServiceUnavailable},
		{nserr.Internalf("x"), nserr.ErrInternal},
		{nserr.InvalidTableStatef("x"), nserr.ErrInvalidTableState},
		{nserr.TableSchemaValidationErrorf("x"), nserr.ErrTableSchemaValidationError},
		{nserr.Throttlingf("x"), nserr.ErrThrottling},
		{nserr.TableBranchNotFoundf("x"), nserr.ErrTableBranchNotFound},
		{nserr.TableBranchAlreadyExistsf("x"), nserr.ErrTableBranchAlreadyExists},
	}
	assert.Equal(t, len(cases), 24)
	for i, c := range cases {
		wrapped := fmt.Errorf("layer: %w", c.err)
		assert.Assert(t, stderrors.Is(wrapped, c.sentinel), "code %d", i)
		assert.Equal(t, int(nserr.CodeOf(wrapped)), i)
		for j, other := range cases {
			if j != i {
				assert.Assert(t, !stderrors.Is(wrapped, other.sentinel), "code %d matched sentinel %d", i, j)
			}
		}
		var e *nserr.Error
		assert.Assert(t, stderrors.As(wrapped, &e))
		assert.Equal(t, int(e.Code), i)
	}
}

func TestCauseIsKept(t *testing.T) {
	cause := stderrors.New("disk on fire")
	err := nserr.TableNotFoundf("table a$b: %w", cause)
	assert.Assert(t, stderrors.Is(err, cause))
	assert.Equal(t, err.Error(), "table a$b: disk on fire")
	assert.Assert(t, stderrors.Is(nserr.Wrap(nserr.Internal, cause, "x"), cause))
}

func TestProblemFor(t *testing.T) {
	t.Run("domain error shows its message", func(t *testing.T) {
		p := nserr.ProblemFor(fmt.Errorf("handler: %w", nserr.TableNotFoundf("table %q not found", "t")), "/v1/table/t/describe", "r1")
		assert.DeepEqual(t, p, nserr.Problem{
			Type: "urn:lance-namespace:error:TableNotFound", Title: "Table not found", Status: 404,
			Detail: `table "t" not found`, Code: 4, Error: `table "t" not found`,
			Instance: "/v1/table/t/describe", RequestID: "r1",
		})
	})
	t.Run("unknown error is internal and redacted", func(t *testing.T) {
		p := nserr.ProblemFor(stderrors.New("secret key abc leaked in path /etc"), "/x", "r2")
		assert.Equal(t, p.Status, http.StatusInternalServerError)
		assert.Equal(t, p.Code, 18)
		assert.Assert(t, p.Detail == p.Error)
		assert.Equal(t, p.Detail, "Internal error (request id r2; details are in the server log)")
	})
	t.Run("typed 5xx is redacted too", func(t *testing.T) {
		p := nserr.ProblemFor(nserr.ServiceUnavailablef("openfga at 10.0.0.1 down"), "/x", "r3")
		assert.Equal(t, p.Status, 503)
		assert.Equal(t, p.Code, 17)
		assert.Assert(t, p.Detail == "Service unavailable (request id r3; details are in the server log)")
	})
	t.Run("transport error keeps its status", func(t *testing.T) {
		p := nserr.ProblemFor(nserr.Transport(413, nserr.InvalidInput, "body too large"), "/x", "")
		assert.Equal(t, p.Status, 413)
		assert.Equal(t, p.Code, 13)
		assert.Equal(t, p.Error, "body too large")
	})
}
