package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestTableLocationsOverHTTP is issue 10 item 1's repro (authorization off): register and declare
// at the control root, inside it, or at another place the server keeps under the catalog root (a
// control root and a warehouse root configured inside it) answer 400 code 13, the table does not
// exist, a drop of it cannot reach the control root, and the control root is intact. A location
// another table holds answers 409 code 5.
func TestTableLocationsOverHTTP(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(cfg *Config)
		// reserved are locations, relative to the catalog root, the server keeps for itself.
		reserved []string
		control  string // the control root, relative to the catalog root
	}{
		{"default", func(*Config) {}, []string{"_lancecat", "_lancecat/_apikeys", "_lancecat/projects"}, "_lancecat"},
		{"configured inside the root", func(cfg *Config) {
			cfg.ControlRoot = filepath.Join(cfg.Root, "ctl")
			cfg.Governance.WarehouseRoot = filepath.Join(cfg.Root, "whs")
		}, []string{"ctl", "ctl/_apikeys", "whs", "whs/w", "_lancecat"}, "ctl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := specConfig(t)
			c.set(&cfg)
			e := newSpecEnv(t, cfg)
			spec := e.as(t, "")
			ctl, err := controlclient.NewClientWithResponses(e.url)
			assert.NilError(t, err)
			ctx := context.Background()

			// A control record that must survive.
			pr, err := ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
			assert.NilError(t, err)
			expect(t, pr.StatusCode(), pr.Body, 200, 0)
			cr, err := spec.CreateNamespaceWithResponse(ctx, "ns1", nil, nsclient.CreateNamespaceRequest{})
			assert.NilError(t, err)
			expect(t, cr.StatusCode(), cr.Body, 200, 0)
			controlDir := filepath.Join(cfg.Root, c.control)
			// The events of the changes above reach the control root's journal asynchronously:
			// written before the snapshot, so the refusals below are what the snapshot judges.
			assert.NilError(t, e.gov.service.Events().Journal().Flush(ctx))
			before := tree(t, controlDir)
			assert.Assert(t, len(before) > 0)

			for _, loc := range append(c.reserved, "__manifest", ".", "", "../x", "/abs", cfg.Root, filepath.Join(cfg.Root, c.control)) {
				rg, err := spec.RegisterTableWithResponse(ctx, "ns1$x", nil, nsclient.RegisterTableRequest{Location: loc})
				assert.NilError(t, err)
				expect(t, rg.StatusCode(), rg.Body, 400, nserr.InvalidInput)
				if loc != "" {
					dc, err := spec.DeclareTableWithResponse(ctx, "ns1$x", nil, nsclient.DeclareTableRequest{Location: &loc})
					assert.NilError(t, err)
					expect(t, dc.StatusCode(), dc.Body, 400, nserr.InvalidInput)
				}
				dr, err := spec.DropTableWithResponse(ctx, "ns1$x", nil)
				assert.NilError(t, err)
				expect(t, dr.StatusCode(), dr.Body, 404, nserr.TableNotFound)
			}
			assert.DeepEqual(t, tree(t, controlDir), before)
			gp, err := ctl.DescribeProjectWithResponse(ctx, "p")
			assert.NilError(t, err)
			expect(t, gp.StatusCode(), gp.Body, 200, 0)

			// Another table's location is held.
			dc, err := spec.DeclareTableWithResponse(ctx, "ns1$t1", nil, nsclient.DeclareTableRequest{})
			assert.NilError(t, err)
			expect(t, dc.StatusCode(), dc.Body, 200, 0)
			loc := *dc.JSON200.Location
			rg, err := spec.RegisterTableWithResponse(ctx, "ns1$alias", nil, nsclient.RegisterTableRequest{Location: loc})
			assert.NilError(t, err)
			expect(t, rg.StatusCode(), rg.Body, 409, nserr.TableAlreadyExists, "held by another table")
			_, err = os.Stat(filepath.Join(cfg.Root, filepath.Base(loc)))
			assert.NilError(t, err, "the declared table's directory is where it was")
		})
	}
}
