package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/registry"
)

func TestAPIKeyCommand(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append([]string{"apikey", args[0], "--root", root}, args[1:]...)
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("create", "--principal", "user:alice", "--description", "ci")
	assert.Equal(t, code, 0, errs)
	key := strings.TrimSpace(out)
	assert.Assert(t, strings.HasPrefix(key, "lck_"), out)

	cfg := app.DefaultConfig()
	cfg.Root = root
	bucket, _, err := app.OpenControlRoot(context.Background(), cfg)
	assert.NilError(t, err)
	// No cache: the revoke below runs as another process would, and must be seen at once here.
	keys := authz.NewAPIKeys(registry.NewStore(bucket), authz.WithCacheTTL(0))
	p, err := keys.VerifyAPIKey(context.Background(), key)
	assert.NilError(t, err)
	assert.Equal(t, p, authz.User("alice"))

	code, out, _ = run("list")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "user:alice") && strings.Contains(out, "ci"), out)
	assert.Assert(t, !strings.Contains(out, key[len("lck_")+13:]), "list never shows a secret")

	id := key[len("lck_") : len("lck_")+12]
	code, out, errs = run("revoke", id)
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "revoked api key "+id), out)
	_, err = keys.VerifyAPIKey(context.Background(), key)
	assert.ErrorContains(t, err, "not accepted")

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"no principal", []string{"create"}, 2},
		{"bad principal", []string{"create", "--principal", "alice"}, 2},
		{"revoke without id", []string{"revoke"}, 2},
		{"unknown id", []string{"revoke", "0123456789ab"}, 1},
		{"unknown subcommand", []string{"rotate"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _ := run(tc.args...)
			assert.Equal(t, code, tc.code)
		})
	}
}
