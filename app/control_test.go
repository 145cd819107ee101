package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestControlLifecycle drives projects and warehouses through HTTP with authorization off (every
// caller is the anonymous estate admin): creates, conflicts, the delete matrix, quarantine, events.
func TestControlLifecycle(t *testing.T) {
	e := newControlEnv(t, authz.Disabled{})
	c, ctx := e.anyone, context.Background()

	p, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p1"})
	assert.NilError(t, err)
	expect(t, p.StatusCode(), p.Body, 200, 0)
	assert.Equal(t, *p.JSON200.CreatedBy, "anonymous")

	for _, tc := range []struct {
		name   string
		id     string
		status int
		code   nserr.Code
		says   string
	}{
		{"again", "p1", 409, nserr.NamespaceAlreadyExists, `project \"p1\" already exists`},
		{"bad id", "Bad!", 400, nserr.InvalidInput, "project id"},
		{"empty id", "", 400, nserr.InvalidInput, "project id"},
	} {
		t.Run("create project "+tc.name, func(t *testing.T) {
			r, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: tc.id})
			assert.NilError(t, err)
			expect(t, r.StatusCode(), r.Body, tc.status, tc.code, tc.says)
		})
	}
	_, err = c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p2"})
	assert.NilError(t, err)

	w, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w1", Project: "p1"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)
	assert.Equal(t, w.JSON200.RootUri, filepath.Join(e.base, "w1"))
	assert.Equal(t, w.JSON200.Status, controlclient.WarehouseStatus("active"))
	_, err = os.Stat(filepath.Join(e.base, "w1"))
	assert.NilError(t, err, "the warehouse directory is provisioned")

	// A warehouse's bucket is a name under the warehouse root, claimed by one warehouse only
	// (issue 10 item 5), and a refusal names neither the holder nor a server path (issue 11 item 9).
	shared := filepath.Join(e.base, "shared")
	for _, tc := range []struct {
		name   string
		req    controlclient.CreateWarehouseRequest
		status int
		code   nserr.Code
		says   string
	}{
		{"unknown project names the fix", controlclient.CreateWarehouseRequest{Id: "w9", Project: "nope"}, 404, nserr.NamespaceNotFound, "POST /v1/projects"},
		{"bad id", controlclient.CreateWarehouseRequest{Id: "W!", Project: "p1"}, 400, nserr.InvalidInput, "warehouse id"},
		{"relative directory", controlclient.CreateWarehouseRequest{Id: "w9", Project: "p1", Bucket: ptr("rel/dir")}, 400, nserr.InvalidInput, "must be a name"},
		{"absolute directory", controlclient.CreateWarehouseRequest{Id: "w9", Project: "p1", Bucket: ptr(t.TempDir())}, 400, nserr.InvalidInput, "must be a name"},
		{"dot-dot", controlclient.CreateWarehouseRequest{Id: "w9", Project: "p1", Bucket: ptr("..")}, 400, nserr.InvalidInput, "must be a name"},
		{"the catalog root is not a name", controlclient.CreateWarehouseRequest{Id: "w9", Project: "p1", Bucket: &e.root}, 400, nserr.InvalidInput, "must be a name"},
		{"same id", controlclient.CreateWarehouseRequest{Id: "w1", Project: "p1"}, 409, nserr.NamespaceAlreadyExists, "already exists"},
		{"same id, other project", controlclient.CreateWarehouseRequest{Id: "w1", Project: "p2"}, 409, nserr.NamespaceAlreadyExists, "another project"},
		{"another project's bucket", controlclient.CreateWarehouseRequest{Id: "w9", Project: "p2", Bucket: ptr("w1")}, 409, nserr.NamespaceAlreadyExists, `bucket \"w1\" is not available`},
		{"a bucket of its own", controlclient.CreateWarehouseRequest{Id: "w2", Project: "p1", Bucket: ptr("shared")}, 200, 0, ""},
		{"a sibling cannot claim it too", controlclient.CreateWarehouseRequest{Id: "w3", Project: "p1", Bucket: ptr("shared")}, 409, nserr.NamespaceAlreadyExists, `bucket \"shared\" is not available`},
		{"the sibling in its own bucket", controlclient.CreateWarehouseRequest{Id: "w3", Project: "p1"}, 200, 0, ""},
	} {
		t.Run("create warehouse "+tc.name, func(t *testing.T) {
			r, err := c.CreateWarehouseWithResponse(ctx, tc.req)
			assert.NilError(t, err)
			expect(t, r.StatusCode(), r.Body, tc.status, tc.code, tc.says)
			if tc.status == 200 {
				return
			}
			leaks := []string{e.base} // no refusal names a server path the caller did not send
			if tc.req.Project == "p2" {
				leaks = append(leaks, "claimed by", "p1") // nor another project's claim
			}
			for _, leak := range leaks {
				assert.Assert(t, !strings.Contains(string(r.Body), leak), "the answer leaks %q: %s", leak, r.Body)
			}
		})
	}

	list, err := c.ListWarehousesWithResponse(ctx, &controlclient.ListWarehousesParams{Project: ptr("p1"), Limit: ptr(int32(2))})
	assert.NilError(t, err)
	expect(t, list.StatusCode(), list.Body, 200, 0)
	assert.Equal(t, len(list.JSON200.Warehouses), 2)
	assert.Equal(t, *list.JSON200.PageToken, "w2")
	list, err = c.ListWarehousesWithResponse(ctx, &controlclient.ListWarehousesParams{PageToken: ptr("w2")})
	assert.NilError(t, err)
	assert.Equal(t, len(list.JSON200.Warehouses), 1)
	assert.Assert(t, list.JSON200.PageToken == nil)

	desc, err := c.DescribeProjectWithResponse(ctx, "p1")
	assert.NilError(t, err)
	expect(t, desc.StatusCode(), desc.Body, 200, 0)
	assert.Equal(t, len(*desc.JSON200.Warehouses), 3)

	t.Run("project delete never cascades and names its warehouses", func(t *testing.T) {
		r, err := c.DeleteProjectWithResponse(ctx, "p1", &controlclient.DeleteProjectParams{Force: ptr(true)})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 409, nserr.NamespaceNotEmpty, "w1, w2, w3", "never cascades")
	})

	t.Run("purge deletes the bytes of the warehouse's own bucket", func(t *testing.T) {
		assert.NilError(t, os.WriteFile(filepath.Join(shared, "data.lance"), []byte("x"), 0o644))
		r, err := c.DeleteWarehouseWithResponse(ctx, "w2", &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true), Force: ptr(true), Cascade: ptr(true)})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Equal(t, *r.JSON200.BucketPurged, true)
		assert.Equal(t, *r.JSON200.ObjectsPurged, int64(1))
		_, err = os.Stat(shared)
		assert.Assert(t, os.IsNotExist(err))
		// w3 stays, in its own bucket.
		r, err = c.DeleteWarehouseWithResponse(ctx, "w3", &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true)})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Equal(t, *r.JSON200.BucketPurged, true)
	})

	t.Run("quarantine flips are idempotent", func(t *testing.T) {
		for _, step := range []struct {
			deactivate bool
			want       string
		}{{true, "deactivated"}, {true, "deactivated"}, {false, "active"}, {false, "active"}, {true, "deactivated"}} {
			var status int
			var body []byte
			var got *controlclient.Warehouse
			if step.deactivate {
				r, err := c.DeactivateWarehouseWithResponse(ctx, "w1")
				assert.NilError(t, err)
				status, body, got = r.StatusCode(), r.Body, r.JSON200
			} else {
				r, err := c.ActivateWarehouseWithResponse(ctx, "w1")
				assert.NilError(t, err)
				status, body, got = r.StatusCode(), r.Body, r.JSON200
			}
			expect(t, status, body, 200, 0)
			assert.Equal(t, string(got.Status), step.want)
		}
		r, err := c.DeactivateWarehouseWithResponse(ctx, "missing")
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 404, nserr.NamespaceNotFound)
	})

	t.Run("protection: force overrides it and nothing else", func(t *testing.T) {
		r, err := c.SetWarehouseProtectionWithResponse(ctx, "w1", controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Equal(t, string(r.JSON200.Status), "deactivated", "a protection change keeps the status")
		d, err := c.DeleteWarehouseWithResponse(ctx, "w1", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.NamespaceNotEmpty, "protected")
		d, err = c.DeleteWarehouseWithResponse(ctx, "w1", &controlclient.DeleteWarehouseParams{Force: ptr(true)})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Equal(t, *d.JSON200.BucketPurged, false)
		_, err = os.Stat(filepath.Join(e.base, "w1"))
		assert.NilError(t, err, "no purge_bucket: the bytes stay")

		pr, err := c.SetProjectProtectionWithResponse(ctx, "p1", controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, pr.StatusCode(), pr.Body, 200, 0)
		dp, err := c.DeleteProjectWithResponse(ctx, "p1", nil)
		assert.NilError(t, err)
		expect(t, dp.StatusCode(), dp.Body, 409, nserr.NamespaceNotEmpty, "protected")
		dp, err = c.DeleteProjectWithResponse(ctx, "p1", &controlclient.DeleteProjectParams{Force: ptr(true)})
		assert.NilError(t, err)
		expect(t, dp.StatusCode(), dp.Body, 200, 0)
		g, err := c.DescribeProjectWithResponse(ctx, "p1")
		assert.NilError(t, err)
		expect(t, g.StatusCode(), g.Body, 404, nserr.NamespaceNotFound)
	})

	t.Run("events", func(t *testing.T) {
		r, err := c.ListEventsWithResponse(ctx, nil)
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		var got []string
		for _, ev := range r.JSON200.Events {
			got = append(got, ev.Type+" "+*ev.Object)
		}
		assert.DeepEqual(t, got, []string{
			"project_created project:p1", "project_created project:p2",
			"warehouse_created warehouse:w1", "warehouse_created warehouse:w2", "warehouse_created warehouse:w3",
			"warehouse_deleted warehouse:w2", "warehouse_deleted warehouse:w3",
			"warehouse_deactivated warehouse:w1", "warehouse_activated warehouse:w1", "warehouse_deactivated warehouse:w1",
			"warehouse_protected warehouse:w1", "warehouse_deleted warehouse:w1",
			"project_protected project:p1", "project_deleted project:p1",
		})
		assert.Assert(t, !r.JSON200.Reset)
		mid := r.JSON200.Events[11].Cursor
		r, err = c.ListEventsWithResponse(ctx, &controlclient.ListEventsParams{Since: &mid})
		assert.NilError(t, err)
		assert.Equal(t, len(r.JSON200.Events), 2)
		assert.Equal(t, r.JSON200.Cursor, r.JSON200.Events[1].Cursor)
		r, err = c.ListEventsWithResponse(ctx, &controlclient.ListEventsParams{Since: ptr("00000000.3")})
		assert.NilError(t, err)
		assert.Assert(t, r.JSON200.Reset, "a cursor of another replica resets")
		r, err = c.ListEventsWithResponse(ctx, &controlclient.ListEventsParams{Since: ptr("junk")})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 400, nserr.InvalidInput)
	})

	t.Run("me", func(t *testing.T) {
		r, err := c.DescribeMeWithResponse(ctx)
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Equal(t, r.JSON200.Principal, "anonymous")
		assert.Assert(t, r.JSON200.EstateAdmin)
		assert.Equal(t, string(r.JSON200.Authorization), "disabled")
	})
}

// TestConcurrentProjectCreates: of 8 concurrent creates of one id, exactly one wins; the others
// are 409 (never last-writer-wins).
func TestConcurrentProjectCreates(t *testing.T) {
	e := newControlEnv(t, authz.Disabled{})
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := e.anyone.CreateProjectWithResponse(context.Background(), controlclient.CreateProjectRequest{Id: "race"})
			if err == nil {
				statuses[i] = r.StatusCode()
			}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	assert.DeepEqual(t, count, map[int]int{200: 1, 409: n - 1})
}

// TestConcurrentStatusFlipsKeepProtection: status flips and a protection change race on one
// record; the ETag-guarded writes lose neither.
func TestConcurrentStatusFlipsKeepProtection(t *testing.T) {
	e := newControlEnv(t, authz.Disabled{})
	ctx, c := context.Background(), e.anyone
	_, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	w, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)

	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 4 {
				var status int
				var body []byte
				switch {
				case i == 0 && j == 0:
					r, err := c.SetWarehouseProtectionWithResponse(ctx, "w", controlclient.SetProtectionRequest{Protected: true})
					if err != nil {
						errs <- err.Error()
						return
					}
					status, body = r.StatusCode(), r.Body
				case (i+j)%2 == 0:
					r, err := c.DeactivateWarehouseWithResponse(ctx, "w")
					if err != nil {
						errs <- err.Error()
						return
					}
					status, body = r.StatusCode(), r.Body
				default:
					r, err := c.ActivateWarehouseWithResponse(ctx, "w")
					if err != nil {
						errs <- err.Error()
						return
					}
					status, body = r.StatusCode(), r.Body
				}
				if status != 200 {
					errs <- fmt.Sprintf("%d %s", status, body)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	r, err := c.DescribeWarehouseWithResponse(ctx, "w")
	assert.NilError(t, err)
	assert.Assert(t, *r.JSON200.Protected, "the protection change survived every concurrent flip")
}

// TestAuthentication: with authorization on, no identity or a bad one is 401 code 16 on every
// route but the probes; a valid API key acts as its principal; a revoked one stops working.
func TestAuthentication(t *testing.T) {
	e := newControlEnv(t, enabledButOpen{})
	ctx := context.Background()
	key, rec, err := e.keys.Create(ctx, authz.User("alice"), "")
	assert.NilError(t, err)

	for _, tc := range []struct {
		name, path string
		header     map[string]string
		status     int
		code       nserr.Code
	}{
		{"no identity", "/v1/me", nil, 401, nserr.Unauthenticated},
		{"no identity on a spec route", "/v1/namespace/%24/list", nil, 401, nserr.Unauthenticated},
		{"unknown key", "/v1/me", map[string]string{"x-api-key": "lck_000000000000_" + strings.Repeat("a", 43)}, 401, nserr.Unauthenticated},
		{"garbage key", "/v1/me", map[string]string{"x-api-key": "hello"}, 401, nserr.Unauthenticated},
		{"bearer without a verifier", "/v1/me", map[string]string{"Authorization": "Bearer abc"}, 401, nserr.Unauthenticated},
		{"key and bearer", "/v1/me", map[string]string{"x-api-key": key, "Authorization": "Bearer abc"}, 401, nserr.Unauthenticated},
		{"valid key", "/v1/me", map[string]string{"x-api-key": key}, 200, 0},
		{"healthz needs nothing", "/healthz", nil, 200, 0},
		{"readyz needs nothing", "/readyz", nil, 200, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, e.url+tc.path, nil)
			assert.NilError(t, err)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			defer res.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(res.Body)
			expect(t, res.StatusCode, buf.Bytes(), tc.status, tc.code)
		})
	}
	me, err := e.client(t, key).DescribeMeWithResponse(ctx)
	assert.NilError(t, err)
	assert.Equal(t, me.JSON200.Principal, "user:alice")

	_, err = e.keys.Revoke(ctx, rec.ID)
	assert.NilError(t, err)
	me, err = e.client(t, key).DescribeMeWithResponse(ctx)
	assert.NilError(t, err)
	expect(t, me.StatusCode(), me.Body, 401, nserr.Unauthenticated)
}

// enabledButOpen is an authorizer that is on (so identity is required) and allows everything:
// it isolates authentication from authorization.
type enabledButOpen struct{ authz.Disabled }

func (enabledButOpen) Enabled() bool { return true }
