package deploy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"gotest.tools/v3/assert"
)

// TestCompose loads deploy/compose.yaml with compose-go (schema validation, interpolation, anchors,
// as `docker compose config` does) and checks the topology: two lancecat replicas over MinIO and
// OpenFGA on PostgreSQL behind a reverse proxy that balances over both.
func TestCompose(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{"compose.yaml"}, cli.WithName("lancecat"), cli.WithResolvedPaths(true))
	assert.NilError(t, err)
	p, err := opts.LoadProject(context.Background())
	assert.NilError(t, err)

	names := p.ServiceNames()
	slices.Sort(names)
	assert.DeepEqual(t, names, []string{"lancecat-1", "lancecat-2", "minio", "minio-init", "openfga", "openfga-migrate", "postgres", "proxy"})

	known := lancecatEnvVars(t)
	for _, n := range []string{"lancecat-1", "lancecat-2"} {
		s := p.Services[n]
		assert.Assert(t, s.ReadOnly && s.User == "65532:65532", "%s: not a read-only non-root container", n)
		assert.Assert(t, s.Build != nil && s.Build.Dockerfile == "Dockerfile", "%s: built from the repository's Dockerfile", n)
		env := s.Environment
		for k, v := range env {
			assert.Assert(t, v != nil && *v != "", "%s: %s empty", n, k)
			assert.Assert(t, slices.Contains(known, k), "%s sets %s, which `lancecat serve` does not read", n, k)
		}
		assert.Equal(t, *env["LANCECAT_ROOT"], "s3://lancecat/catalog")
		assert.Equal(t, *env["LANCECAT_OPENFGA_URL"], "http://openfga:8080")
		assert.Equal(t, *env["LANCECAT_S3_SECRET_KEY"], *p.Services["minio"].Environment["MINIO_ROOT_PASSWORD"])
		assert.Equal(t, *env["LANCECAT_METRICS_ADDR"], "0.0.0.0:9090")
		assert.Equal(t, s.DependsOn["minio-init"].Condition, types.ServiceConditionCompletedSuccessfully)
		assert.Equal(t, s.DependsOn["openfga"].Condition, types.ServiceConditionHealthy)
	}
	assert.Assert(t, strings.Contains(*p.Services["openfga"].Environment["OPENFGA_DATASTORE_URI"], "@postgres:5432/"))
	assert.Equal(t, *p.Services["openfga"].Environment["OPENFGA_DATASTORE_ENGINE"], "postgres")

	proxy := p.Services["proxy"]
	assert.Equal(t, len(proxy.Ports), 1)
	assert.Equal(t, proxy.Ports[0].Published, "8080")
	conf := p.Configs[proxy.Configs[0].Source].Content
	for _, upstream := range []string{"server lancecat-1:2333", "server lancecat-2:2333", "proxy_pass http://lancecat;"} {
		assert.Assert(t, strings.Contains(conf, upstream), "nginx config lacks %q:\n%s", upstream, conf)
	}
	// $$ escapes compose interpolation: nginx must see its own variables.
	assert.Assert(t, strings.Contains(conf, "$host") && !strings.Contains(conf, "$$"), "%s", conf)
}
