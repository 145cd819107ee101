package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// credentialOptionNames are the storage options that carry a credential and its expiry, in the
// names Lance's object store reads (aws_*) and the one its namespace clients watch to refresh
// (expires_at_millis: the client describes the table again before that instant).
var credentialOptionNames = []string{"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_at_millis"}

// credentialVendor decides what credentials a caller is handed with a table's location.
//
// With vending on (--vend-credentials) and a table under an s3:// root, the caller gets an STS
// session credential confined to the table's prefix (storage.SessionPolicy):
//   - read-write when the caller may write the table's data (the door TableCredentialsWrite:
//     can_write_data), read-only when it may only read it (TableCredentialsRead: can_read_data),
//     and none (connection hints only) when it may only see the table's metadata;
//   - with authorization off every caller is an estate admin and may write through the API
//     anyway, so every caller gets read-write: the credential is still scoped to the one table;
//   - in read-only mode nobody gets more than read-only.
//
// A table on local disk gets no credentials (a path needs none; nothing to scope). The request's
// vend_credentials false strips every credential option, the static opt-in's too.
type credentialVendor struct {
	vendor     *storage.Vendor // nil: no minting (off, or the static opt-in already in the options)
	authorizer authz.Authorizer
	readOnly   bool
	info       controlapi.CredentialVending
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
	cv := &credentialVendor{vendor: v, authorizer: a, readOnly: cfg.Governance.ReadOnly}
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

// StorageOptions implements handlers.CredentialVendor.
func (v *credentialVendor) StorageOptions(ctx context.Context, id ident.ID, uri string, base map[string]string, want *bool) (map[string]string, error) {
	if want != nil && !*want {
		for _, k := range credentialOptionNames {
			delete(base, k)
		}
		return base, nil
	}
	if v.vendor == nil || !strings.HasPrefix(uri, "s3://") {
		return base, nil
	}
	access, err := v.access(ctx, id)
	if err != nil || access == 0 {
		return base, err
	}
	c, err := v.vendor.Vend(ctx, uri, access)
	switch {
	case errors.Is(err, storage.ErrUnscopable):
		return nil, nserr.Unsupportedf("no credential can be confined to %s (%v); describe it with vend_credentials false and use your own credentials", uri, err)
	case err != nil:
		return nil, nserr.ServiceUnavailablef("vending credentials for %s: %w", uri, err)
	}
	if base == nil {
		base = map[string]string{}
	}
	base["aws_access_key_id"] = c.AccessKeyID
	base["aws_secret_access_key"] = c.SecretAccessKey
	base["aws_session_token"] = c.SessionToken
	base["expires_at_millis"] = strconv.FormatInt(c.Expires.UnixMilli(), 10)
	return base, nil
}

// access is what the caller of ctx may do with the table id's objects (0: nothing).
func (v *credentialVendor) access(ctx context.Context, id ident.ID) (storage.Access, error) {
	access := storage.AccessReadWrite
	if v.authorizer != nil && v.authorizer.Enabled() {
		p, obj := authz.PrincipalFrom(ctx), authz.TableObject(id)
		err := v.authorizer.Check(ctx, p, authz.TableCredentialsWrite, obj)
		if nserr.CodeOf(err) == nserr.PermissionDenied {
			access = storage.AccessRead
			err = v.authorizer.Check(ctx, p, authz.TableCredentialsRead, obj)
			if nserr.CodeOf(err) == nserr.PermissionDenied {
				return 0, nil
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if v.readOnly {
		access = storage.AccessRead
	}
	return access, nil
}

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
