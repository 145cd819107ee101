package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/spec"
	"github.com/lancecat/lancecat/table"
)

// TestEveryPinnedOperationHasADoor: every operation of the pinned spec, backed or not, has a door
// rule; an operation without one would be refused (403) with authorization on where it answers
// something else (406 for one this server does not back) with it off.
func TestEveryPinnedOperationHasADoor(t *testing.T) {
	for _, op := range pinnedOperations {
		door, ok := guards.SpecDoors[op.ID]
		if !assert.Check(t, ok, "%s has no door in guards.SpecDoors", op.ID) || door.Action == "" {
			continue
		}
		_, _, err := authz.RelationFor(door.Action)
		assert.Check(t, err, "%s: door %s", op.ID, door.Action)
	}
}

// doorAnswer is what a door answered: status and spec code (0 on success).
type doorAnswer struct {
	Status int
	Code   int
}

// TestDoorSweepAuthorizationOnAndOff (issue 18): every route of the pinned spec, sent the same
// request in the same order to a catalog with authorization off and to one with authorization on
// (real OpenFGA, the caller an estate admin, who may do everything), answers the same status and
// code; none answers 403 with authorization on, and the doors this server does not back answer
// 406 under both. The state is the same on both: a namespace, a table with rows, a view's id, a
// transaction's id; the destructive doors act on ids of their own so the rest see the table.
func TestDoorSweepAuthorizationOnAndOff(t *testing.T) {
	ctx := context.Background()
	off := newSpecEnv(t, specConfig(t))
	cfg := openFGAConfig(t, "lancecat-sweep")
	cfg.Governance.EstateAdmins = "user:admin"
	cfg.Governance.OpenFGATimeout = 20 * time.Second
	on := newSpecEnv(t, cfg)
	key, _, err := on.keys.Create(ctx, authz.User("admin"), "sweep")
	assert.NilError(t, err)
	sides := []sweepSide{{url: off.url}, {url: on.url, key: key}}
	for _, s := range sides {
		sweepState(t, s)
	}
	unbacked := map[string]bool{}
	for _, op := range pinnedOperations {
		var answers []doorAnswer
		for _, s := range sides {
			a, raw := sweepDoor(t, s, op)
			answers = append(answers, a)
			if a.Status == http.StatusForbidden || a.Status == http.StatusInternalServerError {
				t.Errorf("%s: %d %s", op.ID, a.Status, raw)
			}
		}
		assert.Check(t, answers[0] == answers[1], "%s: authorization off answered %+v, on %+v", op.ID, answers[0], answers[1])
		if answers[0].Status == http.StatusNotAcceptable {
			unbacked[op.ID] = true
		}
	}
	t.Logf("unbacked (406 on both sides): %v", unbacked)
}

// sweepSide is one catalog a sweep sends its requests to, with the API key it sends ("" for
// none: authorization off).
type sweepSide struct {
	url string
	key string
}

// sweepState makes the state a sweep runs in: namespaces ns and gone, tables ns$t and ns$victim.
func sweepState(t *testing.T, s sweepSide) {
	t.Helper()
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	c, err := client.New(s.url, client.WithAPIKey(s.key))
	assert.NilError(t, err)
	cat := catalogtest.HTTP(c)
	for _, ns := range []string{"ns", "gone"} {
		_, err = cat.CreateNamespace(ctx, ident.ID{ns}, nil, catalog.ModeCreate)
		assert.NilError(t, err)
	}
	for _, name := range []string{"t", "victim"} {
		_, _, err = cat.CreateTable(ctx, ident.ID{"ns", name}, catalog.NewTable{Schema: schema})
		assert.NilError(t, err)
	}
}

// sweepDoor sends op a request with body {} (none for a GET) on the sweep's ids: the table ns$t,
// the namespace ns; the destructive doors act on ids of their own (ns$victim, gone) so the doors
// after them still see the table; a view's id and a transaction's id under ns.
func sweepDoor(t *testing.T, s sweepSide, op server.Operation) (doorAnswer, []byte) {
	t.Helper()
	id := "ns%24t"
	switch {
	case strings.HasPrefix(op.Path, "/v1/namespace/"):
		id = "ns"
		if op.ID == "DropNamespace" {
			id = "gone"
		}
	case strings.HasPrefix(op.Path, "/v1/materialized_view/"):
		id = "ns%24view"
	case strings.HasPrefix(op.Path, "/v1/transaction/"):
		id = "ns%24txn1"
	case op.ID == "DropTable" || op.ID == "DeregisterTable" || op.ID == "RenameTable":
		id = "ns%24victim"
	}
	path := strings.NewReplacer("{id}", id, "{index_name}", "k_idx").Replace(op.Path)
	var body io.Reader
	if op.Method != http.MethodGet {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(context.Background(), op.Method, s.url+path+"?delimiter=%24", body)
	assert.NilError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.key != "" {
		req.Header.Set("x-api-key", s.key)
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := doorAnswer{Status: resp.StatusCode}
	if resp.StatusCode >= 400 {
		var p nserr.Problem
		assert.Check(t, json.Unmarshal(raw, &p), "%s: %s", op.ID, raw)
		a.Code = p.Code
	}
	return a, raw
}

// TestUnbackedRegistryMatchesTheDoors: the operations that answer 406 on a served catalog with a
// real namespace and table are exactly handlers.UnbackedOperations (what GET /v1/capabilities
// reports as not backed), and each 406 says the registry's reason.
func TestUnbackedRegistryMatchesTheDoors(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	s := sweepSide{url: e.url}
	sweepState(t, s)
	registry := handlers.UnbackedOperations()
	seen := map[string]bool{}
	for _, op := range pinnedOperations {
		a, raw := sweepDoor(t, s, op)
		if a.Status != http.StatusNotAcceptable {
			continue
		}
		seen[op.ID] = true
		why, ok := registry[op.ID]
		if assert.Check(t, ok, "%s answers 406 but is not in handlers.unbackedOperations: %s", op.ID, raw) {
			assert.Check(t, strings.Contains(string(raw), why), "%s: %s", op.ID, raw)
		}
	}
	for op := range registry {
		assert.Check(t, seen[op], "%s is in handlers.unbackedOperations but does not answer 406", op)
	}
}

// TestCapabilities: GET /v1/capabilities lists every pinned operation once, in the pinned order,
// marks backed exactly those outside the unbacked registry (with the registry's reason), and
// reports the features and the pinned spec.
func TestCapabilities(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	resp, err := http.Get(e.url + "/v1/capabilities")
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	var caps controlapi.Capabilities
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&caps))
	assert.Equal(t, caps.Spec.Version, spec.LanceNamespace().Version)
	assert.Equal(t, caps.Spec.Operations, pinnedOperationCount)
	assert.Equal(t, len(caps.Operations), pinnedOperationCount)
	registry := handlers.UnbackedOperations()
	backed := 0
	for i, op := range caps.Operations {
		want := pinnedOperations[i]
		assert.Equal(t, op.Id+" "+op.Method+" "+op.Path, want.ID+" "+want.Method+" "+want.Path)
		why, unbacked := registry[op.Id]
		assert.Equal(t, op.Backed, !unbacked, op.Id)
		if unbacked {
			assert.Check(t, op.Reason != nil && *op.Reason == why, op.Id)
		} else {
			backed++
		}
	}
	t.Logf("backed: %d of %d", backed, len(caps.Operations))
	f := caps.Features
	assert.Check(t, f.Branches && f.Tags && f.ManagedVersioning, "%+v", f)
	assert.Check(t, !f.VendedCredentials && !f.Authorization, "%+v", f)
	assert.Equal(t, f.MultiTableCommit, registry["BatchCommitTables"] == "" && registry["BatchCreateTableVersions"] == "")
	assert.DeepEqual(t, f.IndexTypes, table.IndexTypes())
}
