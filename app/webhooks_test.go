package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/governance"
)

// TestServeDeliversWebhooks: `lancecat serve --webhook-urls … --webhook-secret-file …` POSTs the
// control events it records, signed with the file's key, to the endpoint (issue 19: optional
// webhook delivery of the durable event log).
func TestServeDeliversWebhooks(t *testing.T) {
	secret := []byte("webhook-key")
	var mu sync.Mutex
	var got []governance.WebhookEvent
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := governance.VerifyWebhook(secret, r.Header.Get(governance.WebhookSignatureHeader), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p governance.WebhookPayload
		assert.Check(t, json.Unmarshal(body, &p))
		mu.Lock()
		got = append(got, p.Events...)
		mu.Unlock()
	}))
	defer recv.Close()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	assert.NilError(t, os.WriteFile(keyFile, append(secret, '\n'), 0o600))
	cfg := DefaultConfig()
	cfg.Root = filepath.Join(dir, "data")
	cfg.Governance.Webhooks = WebhookConfig{URLs: recv.URL + "/hook", SecretFile: keyFile}
	base := runServer(t, cfg)
	c, err := controlclient.NewClientWithResponses(base)
	assert.NilError(t, err)
	r, err := c.CreateProjectWithResponse(context.Background(), controlclient.CreateProjectRequest{Id: "hooked"})
	assert.NilError(t, err)
	assert.Equal(t, r.StatusCode(), 200, string(r.Body))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range got {
			if ev.Type == governance.EventProjectCreated {
				assert.Check(t, ev.Cursor != "")
				return poll.Success()
			}
		}
		return poll.Continue("%d events received, none project_created", len(got))
	}, poll.WithTimeout(20*time.Second), poll.WithDelay(10*time.Millisecond))
}

// TestWebhookConfigRefusesMistakes: a bad endpoint or an unreadable key file stops the server at
// its start with the flag named, not at the first event.
func TestWebhookConfigRefusesMistakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    WebhookConfig
		err  string
	}{
		{"not http", WebhookConfig{URLs: "ftp://host/x"}, "--webhook-urls"},
		{"relative", WebhookConfig{URLs: "https://ok.example/x, /relative"}, "--webhook-urls"},
		{"missing key file", WebhookConfig{URLs: "https://ok.example/x", SecretFile: "/nonexistent/key"}, "--webhook-secret-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Governance.Webhooks = tc.w
			assert.ErrorContains(t, cfg.Validate(), tc.err)
		})
	}
	cfg := DefaultConfig()
	cfg.Governance.Webhooks = WebhookConfig{URLs: "https://a.example/x,https://b.example/y", Events: "grant_added, policy_set"}
	assert.NilError(t, cfg.Validate())
	hooks, err := cfg.Governance.Webhooks.hooks()
	assert.NilError(t, err)
	assert.Equal(t, len(hooks), 2)
	assert.DeepEqual(t, hooks[1].Types, []string{"grant_added", "policy_set"})
}
