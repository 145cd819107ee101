package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestDataDoorsAuthorization: with --authz openfga the data doors are checked on their table: a
// reader queries, counts and explains but writes nothing (403 code 15 on insert, merge, update,
// delete, add/alter/drop columns); a writer writes; an outsider does neither (403, for an existing
// table and a missing one alike).
func TestDataDoorsAuthorization(t *testing.T) {
	cfg := openFGAConfig(t, "lancecat-test")
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	call := func(p authz.Principal) func(route, contentType string, body []byte) (int, []byte) {
		sign := e.keyFor(t, p)
		return func(route, contentType string, body []byte) (int, []byte) {
			req, err := http.NewRequest(http.MethodPost, e.url+route, bytes.NewReader(body))
			assert.NilError(t, err)
			req.Header.Set("Content-Type", contentType)
			assert.NilError(t, sign(ctx, req))
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, out
		}
	}
	alice, carol, dave, bob := call(authz.User("alice")), call(authz.User("carol")), call(authz.User("dave")), call(authz.User("bob"))
	const arrowType = "application/vnd.apache.arrow.stream"
	st, body := alice("/v1/namespace/ns/create", "application/json", []byte(`{}`))
	expect(t, st, body, 200, 0)
	st, body = alice("/v1/table/ns$t/create", arrowType, lz4Stream(t, 1, 2, 3))
	expect(t, st, body, 200, 0)
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "reader", authz.TableObject([]string{"ns", "t"})))
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("dave").Subject(), "writer", authz.TableObject([]string{"ns", "t"})))

	reads := []struct{ route, body string }{
		{"query", `{"k":10,"filter":"id > 1"}`},
		{"count_rows", `{"predicate":"id > 1"}`},
		{"explain_plan", `{"query":{"k":10}}`},
		{"analyze_plan", `{"k":10}`},
	}
	writes := []struct {
		route, contentType string
		body               []byte
	}{
		{"insert", arrowType, lz4Stream(t, 4)},
		{"merge_insert?on=id&when_not_matched_insert_all=true", arrowType, lz4Stream(t, 5)},
		{"update", "application/json", []byte(`{"updates":[["id","id + 10"]],"predicate":"id = 1"}`)},
		{"delete", "application/json", []byte(`{"predicate":"id = 2"}`)},
		{"add_columns", "application/json", []byte(`{"new_columns":[{"name":"x","expression":"id * 2"}]}`)},
		{"alter_columns", "application/json", []byte(`{"alterations":[{"path":"x","rename":"y"}]}`)},
		{"drop_columns", "application/json", []byte(`{"columns":["y"]}`)},
	}
	for _, r := range reads {
		st, body := carol("/v1/table/ns$t/"+r.route, "application/json", []byte(r.body))
		expect(t, st, body, 200, 0)
		for _, table := range []string{"ns$t", "ns$missing"} {
			st, body = bob("/v1/table/"+table+"/"+r.route, "application/json", []byte(r.body))
			expect(t, st, body, 403, nserr.PermissionDenied)
		}
	}
	for _, w := range writes {
		st, body := carol("/v1/table/ns$t/"+w.route, w.contentType, w.body)
		expect(t, st, body, 403, nserr.PermissionDenied)
		st, body = bob("/v1/table/ns$t/"+w.route, w.contentType, w.body)
		expect(t, st, body, 403, nserr.PermissionDenied)
		st, body = dave("/v1/table/ns$t/"+w.route, w.contentType, w.body)
		expect(t, st, body, 200, 0)
	}
	st, body = carol("/v1/table/ns$t/count_rows", "application/json", []byte(`{}`))
	expect(t, st, body, 200, 0)
	assert.Equal(t, string(body), "4", "the writer's rows: 1→11, 2 deleted, 4 and 5 added")
}
