package governed

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// credentialOptionNames are the storage options that carry a credential and its expiry, in the
// names Lance's object store reads (aws_*) and the one its namespace clients watch to refresh
// (expires_at_millis: the client describes the table again before that instant).
var credentialOptionNames = []string{"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_at_millis"}

// CredentialOptionNames are the storage options a request's vend_credentials false strips.
func CredentialOptionNames() []string { return slices.Clone(credentialOptionNames) }

// CredentialPolicy decides what credentials a caller is handed with a table's location: an
// object-level authorization beyond the door, so it is the governed catalog's.
//
// With a Vendor (--vend-credentials) and a table under an s3:// root, the caller gets an STS
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
type CredentialPolicy struct {
	Vendor     *storage.Vendor // nil: no minting (off, or the static opt-in already in the options)
	Authorizer authz.Authorizer
	ReadOnly   bool
}

// StorageOptions are base (the table id's own options at uri) with the credentials the caller of
// ctx may have for it; want is the request's vend_credentials (nil: the policy decides).
func (v *CredentialPolicy) StorageOptions(ctx context.Context, id ident.ID, uri string, base map[string]string, want *bool) (map[string]string, error) {
	if want != nil && !*want {
		for _, k := range credentialOptionNames {
			delete(base, k)
		}
		return base, nil
	}
	if v.Vendor == nil || !strings.HasPrefix(uri, "s3://") {
		return base, nil
	}
	access, err := v.access(ctx, id)
	if err != nil || access == 0 {
		return base, err
	}
	c, err := v.Vendor.Vend(ctx, uri, access)
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
func (v *CredentialPolicy) access(ctx context.Context, id ident.ID) (storage.Access, error) {
	access := storage.AccessReadWrite
	if v.Authorizer != nil && v.Authorizer.Enabled() {
		p, obj := authz.PrincipalFrom(ctx), authz.TableObject(id)
		err := v.Authorizer.Check(ctx, p, authz.TableCredentialsWrite, obj)
		if nserr.CodeOf(err) == nserr.PermissionDenied {
			access = storage.AccessRead
			err = v.Authorizer.Check(ctx, p, authz.TableCredentialsRead, obj)
			if nserr.CodeOf(err) == nserr.PermissionDenied {
				return 0, nil
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if v.ReadOnly {
		access = storage.AccessRead
	}
	return access, nil
}
