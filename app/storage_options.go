package app

import (
	"log/slog"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog/governed"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
)

// credentialVendor is the vending policy of the governed catalog (governed.CredentialPolicy: who
// gets which credentials with a table's location) with what GET /v1/capabilities says about the
// settings it was built from.
type credentialVendor struct {
	*governed.CredentialPolicy
	info controlapi.CredentialVending
}

var _ handlers.CredentialVendor = (*credentialVendor)(nil)

// newCredentialVendor is the vendor of cfg; nil when neither vending nor the static opt-in is on
// (the handlers then answer each table's own options).
func newCredentialVendor(cfg Config, a authz.Authorizer, rootURI string) (handlers.CredentialVendor, error) {
	if !cfg.Vend.Credentials && !cfg.VendStaticCredentials {
		return nil, nil
	}
	v, err := cfg.vendor()
	if err != nil {
		return nil, err
	}
	cv := &credentialVendor{CredentialPolicy: &governed.CredentialPolicy{Vendor: v, Authorizer: a, ReadOnly: cfg.Governance.ReadOnly}}
	switch {
	case v == nil:
		why := "--vend-static-credentials: the server's own long-lived key, unscoped and unexpiring; --vend-credentials vends scoped, expiring ones"
		cv.info = controlapi.CredentialVending{Mode: controlapi.VendingStatic, Reason: &why}
	default:
		secs := int64(cfg.Vend.Duration / time.Second)
		cv.info = controlapi.CredentialVending{Mode: controlapi.VendingSTS, DurationSeconds: &secs}
		if !strings.HasPrefix(rootURI, "s3://") {
			why := "the catalog root is not in S3: its tables get no credentials (a local path has nothing to scope); tables in S3 warehouses do"
			cv.info.Reason = &why
		}
	}
	return cv, nil
}

// Vending implements handlers.CredentialVendor.
func (v *credentialVendor) Vending() controlapi.CredentialVending { return v.info }

// logVending says at startup what storage_options will carry, and why not credentials when the
// catalog root is local disk (tables in S3 warehouses still get them).
func logVending(logger *slog.Logger, cfg Config, rootURI string) {
	switch {
	case cfg.Vend.Credentials && !strings.HasPrefix(rootURI, "s3://"):
		logger.Info("credential vending on, but the catalog root is not in S3: its tables get no credentials (a local path has nothing to scope); tables in S3 warehouses do",
			slog.String("root", rootURI), slog.Duration("duration", cfg.Vend.Duration))
	case cfg.Vend.Credentials:
		logger.Info("credential vending on: table-scoped STS credentials in storage_options",
			slog.String("sts_endpoint", cfg.stsEndpoint()), slog.Duration("duration", cfg.Vend.Duration))
	case cfg.VendStaticCredentials:
		logger.Warn("--vend-static-credentials: the server's own S3 key and secret are handed to every caller who may describe a table")
	}
}
