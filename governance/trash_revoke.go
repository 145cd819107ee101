package governance

// A purged object's grants go with it. A recoverable drop keeps the object's tuples (its grants,
// and the structural edges to and from its parent) so an undrop gives it back to the same people;
// once the purge takes the record for good, those tuples must go too, or the next object at the
// id, and the containers above it through the leftover child edge, would still answer to them.
//
// The purge revokes them right after it deletes the record. When it cannot reach the
// authorization service (`lancecat trash purge` run without, or unable to reach, the OpenFGA the
// servers use) it files a registry.Revocation on the control root instead, says so in its report,
// and every later purge run that can reach OpenFGA (the command's or a server's background loop)
// revokes what is queued and deletes the records.
//
// An id that is live again is left alone: an undrop wants its tuples back, and a create or
// rename at the id cleared what the old object left before it seeded its own.

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// What the purge did with a purged object's grants (PurgeItem.Grants).
const (
	GrantsRevoked = "revoked" // every tuple on or naming the object is gone
	GrantsQueued  = "queued"  // filed for the next purge run that reaches the authorization service
	GrantsInUse   = "in_use"  // the id is live again: its tuples are the live object's
)

// RevokeWith makes the purge revoke purged objects' tuples through a (the admin command's own
// connection to OpenFGA; the server's purge uses the service's authorizer).
func (t *Trash) RevokeWith(a authz.Authorizer) { t.revoker = a }

// QueueRevocations makes the purge queue purged objects' tuple revocations (for reason) when it
// has no authorization service to revoke them with: the admin command without OpenFGA. Without
// it, a purge with authorization off revokes nothing (a deployment without grants).
func (t *Trash) QueueRevocations(reason string) { t.queueReason = reason }

func (t *Trash) authorizer() authz.Authorizer {
	if t.revoker != nil {
		return t.revoker
	}
	return t.authz
}

func authzObject(kind string, id ident.ID) authz.Object {
	if kind == registry.KindNamespace {
		return authz.NamespaceObject(id)
	}
	return authz.TableObject(id)
}

// revokeGone revokes the tuples of object (kind, id), gone for good, or queues the revocation.
// It answers what it did (GrantsRevoked, GrantsQueued, GrantsInUse; "" with authorization off
// and no queue) and why when it did not revoke.
func (t *Trash) revokeGone(ctx context.Context, kind string, id ident.ID) (string, string) {
	a := t.authorizer()
	if !a.Enabled() && t.queueReason == "" {
		return "", ""
	}
	live, err := t.liveObject(ctx, kind, id)
	switch {
	case err == nil && live:
		return GrantsInUse, ""
	case err == nil && a.Enabled():
		_, err = a.RevokeAll(ctx, authzObject(kind, id))
		if err == nil {
			return GrantsRevoked, ""
		}
	case err == nil:
		err = errors.New(t.queueReason)
	}
	reason := err.Error()
	rec := registry.Revocation{Kind: kind, ID: slices.Clone(id), QueuedAt: t.now().UTC(), Reason: reason}
	if qerr := registry.Put(ctx, t.store, registry.RevocationKey(kind, id), rec); qerr != nil {
		t.log.LogAttrs(ctx, slog.LevelError, "a purged object's grants could neither be revoked nor queued: revoke them by hand",
			slog.String("object", authzObject(kind, id).String()), slog.String("error", reason), slog.String("queue_error", qerr.Error()))
		return "", "revoking its grants failed (" + reason + ") and so did queueing them (" + qerr.Error() + "): revoke them by hand"
	}
	return GrantsQueued, reason
}

// liveObject reports whether a table or namespace is registered at id now. What the catalog
// cannot answer for is an error: nothing is revoked on a guess.
func (t *Trash) liveObject(ctx context.Context, kind string, id ident.ID) (bool, error) {
	var err error
	switch {
	case kind == registry.KindTable && t.bytes != nil:
		_, err = t.bytes.DescribeTable(ctx, id)
	case kind == registry.KindNamespace && t.objects != nil:
		err = t.objects.NamespaceExists(ctx, id)
	default:
		return false, nil
	}
	switch {
	case err == nil:
		return true, nil
	case nserr.Is(err, nserr.ErrTableNotFound), nserr.Is(err, nserr.ErrNamespaceNotFound):
		return false, nil
	}
	return false, err
}

// retryRevocations revokes what earlier runs queued, when this run can reach the authorization
// service; it answers how many it revoked and how many are still queued.
func (t *Trash) retryRevocations(ctx context.Context, dry bool) (done, pending int, err error) {
	listed, err := registry.List[registry.Revocation](ctx, t.store, registry.RevocationsPrefix)
	if err != nil {
		return 0, 0, registryError(err)
	}
	pending = len(listed.Records) + len(listed.Skipped)
	a := t.authorizer()
	if dry || !a.Enabled() {
		return 0, pending, nil
	}
	for i, rec := range listed.Records {
		id := ident.ID(rec.ID)
		live, err := t.liveObject(ctx, rec.Kind, id)
		if err != nil {
			continue
		}
		if !live {
			if _, err := a.RevokeAll(ctx, authzObject(rec.Kind, id)); err != nil {
				t.log.LogAttrs(ctx, slog.LevelWarn, "a queued grant revocation failed again; the next purge run retries",
					slog.String("object", authzObject(rec.Kind, id).String()), slog.String("error", err.Error()))
				continue
			}
		}
		if err := t.discard(ctx, listed.Keys[i]); err != nil {
			continue
		}
		t.emit(ctx, EventGrantsRevoked, purgeActor, authzObject(rec.Kind, id).String(), map[string]string{"queued_at": rec.QueuedAt.Format(time.RFC3339)})
		done++
		pending--
	}
	return done, pending, nil
}

// EventGrantsRevoked is emitted when a queued revocation of a purged object's tuples is done.
const EventGrantsRevoked = "grants_revoked"
