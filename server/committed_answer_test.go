package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// TestCommittedAnswerShownAndLogged: on the wire, an operation that committed but whose
// follow-up failed is 500 code 18 with the committed type, its catalog-authored detail (with the
// request id) and a context saying it committed; its cause (an internal address) is not in the
// body but is in the log beside the request id, as every 5xx's is.
func TestCommittedAnswerShownAndLogged(t *testing.T) {
	s, logs := newTestServerWithLog(t, 0)
	s.echo.POST("/v1/test/committed", func(echo.Context) error {
		return &nserr.Committed{
			Done: "table ns$t was renamed to ns$u", Missing: []string{"its owner could not be recorded at its new id"},
			Remedy: "ask an estate admin", Cause: nserr.ServiceUnavailablef("openfga at %s refused: %w", "10.1.2.3:8081", errors.New("dial tcp")),
		}
	})
	a := do(t, s.Handler(), "POST", "/v1/test/committed", ``, map[string]string{"X-Request-Id": "rid-43"})
	assert.Equal(t, a.status, 500, a.body)
	assert.Equal(t, a.problem.Code, 18)
	assert.Equal(t, a.problem.Type, nserr.CommittedType)
	assert.Equal(t, a.problem.Detail, "table ns$t was renamed to ns$u and that stands, but its owner could not be recorded at its new id. "+
		"Do not retry the request: it committed; ask an estate admin (request id rid-43)")
	assert.Equal(t, a.problem.Error, a.problem.Detail)
	assert.DeepEqual(t, a.problem.Context, map[string]string{"committed": "true"})
	assert.Assert(t, !strings.Contains(a.body, "10.1.2.3"), a.body)
	assert.Assert(t, strings.Contains(logs.String(), "10.1.2.3:8081"), logs.String())
	assert.Assert(t, strings.Contains(logs.String(), `"request_id":"rid-43"`))
}
