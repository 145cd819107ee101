package app

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/lancecat/lancecat/governance"
)

// WebhookConfig delivers the control events (the journal) to HTTP endpoints.
type WebhookConfig struct {
	URLs       string // comma-separated http(s) endpoints; empty: no delivery
	Secret     string // HMAC-SHA256 key for the Lancecat-Signature header
	SecretFile string // the key read from a file (beats Secret: a flag shows in the process list)
	Events     string // comma-separated event types delivered; empty: all
}

func (w *WebhookConfig) bindFlags(b binder) {
	b.str(&w.URLs, "webhook-urls", "LANCECAT_WEBHOOK_URLS", "comma-separated http(s) endpoints every control event is POSTed to (signed, in order, retried until 2xx; one replica delivers each at a time)")
	b.str(&w.Secret, "webhook-secret", "LANCECAT_WEBHOOK_SECRET", "key signing webhook deliveries (header Lancecat-Signature: t=<unix>,v1=<hex HMAC-SHA256(key, \"<t>.<body>\")>); prefer the environment or --webhook-secret-file")
	b.str(&w.SecretFile, "webhook-secret-file", "LANCECAT_WEBHOOK_SECRET_FILE", "read the webhook signing key from this file")
	b.str(&w.Events, "webhook-events", "LANCECAT_WEBHOOK_EVENTS", "comma-separated event types to deliver (default: all)")
}

// hooks returns the configured endpoints (none: nil).
func (w WebhookConfig) hooks() ([]governance.Webhook, error) {
	if strings.TrimSpace(w.URLs) == "" {
		return nil, nil
	}
	secret := []byte(w.Secret)
	if w.SecretFile != "" {
		b, err := os.ReadFile(w.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("--webhook-secret-file: %w", err)
		}
		secret = []byte(strings.TrimSpace(string(b)))
	}
	var types []string
	for _, t := range strings.Split(w.Events, ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	var out []governance.Webhook
	for _, u := range strings.Split(w.URLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, governance.Webhook{URL: u, Secret: secret, Types: types})
		}
	}
	return out, nil
}

// webhooks is the deliverer for gov's journal, or nil when no endpoint is configured.
func (w WebhookConfig) webhooks(roots *catalogRoots, gov *governanceParts, logger *slog.Logger) (*governance.Webhooks, error) {
	hooks, err := w.hooks()
	if err != nil || len(hooks) == 0 {
		return nil, err
	}
	j := gov.service.Events().Journal()
	if j == nil {
		return nil, fmt.Errorf("--webhook-urls: this catalog has no event journal")
	}
	if len(hooks[0].Secret) == 0 {
		logger.Warn("webhooks are delivered unsigned: set --webhook-secret-file or LANCECAT_WEBHOOK_SECRET")
	}
	return governance.NewWebhooks(j, roots.control, hooks, governance.WebhookOptions{Logger: logger.With(slog.String("log", "webhooks"))})
}
