package governance

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/registry"
)

// CreateWarehouse is what POST /v1/warehouses asks for.
type CreateWarehouse struct {
	ID        string
	Project   string
	Bucket    string // "" derives it from the id
	Protected bool
}

// DeleteWarehouse are the three separate opt-ins of a warehouse delete; none is implied by another.
type DeleteWarehouse struct {
	Cascade     bool // unbind (and drop) its namespaces
	PurgeBucket bool // delete the bucket's objects: the only way bytes leave with a warehouse
	Force       bool // override protection, and nothing else
}

// DeletedWarehouse reports what a delete did.
type DeletedWarehouse struct {
	registry.Warehouse
	NamespacesDropped []string
	TuplesRevoked     int
	BucketPurged      bool
	ObjectsPurged     int64
}

// NamespaceDropper drops a bound top-level namespace in its warehouse's root (Restrict: a
// namespace holding tables refuses on its own rung). Until the namespace backend provides it, a
// cascade over bound namespaces is refused.
type NamespaceDropper interface {
	DropBoundNamespace(ctx context.Context, binding registry.Binding) error
}

// warehouseShape is the shape guard of a warehouse id (guards.WarehouseShape).
func warehouseShape(id string) error { return guards.WarehouseShape(id) }

func warehouseMissing(id string) error {
	return nserr.NamespaceNotFoundf("warehouse %q does not exist", id)
}

// CreateWarehouse provisions a bucket for a project and records it; the creator owns it and the
// project's admins own it through the project.
func (s *Service) CreateWarehouse(ctx context.Context, p authz.Principal, req CreateWarehouse) (registry.Warehouse, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Warehouse{}, err
	}
	// Shape.
	if err := warehouseShape(req.ID); err != nil {
		return registry.Warehouse{}, err
	}
	if err := projectShape(req.Project); err != nil {
		return registry.Warehouse{}, err
	}
	if s.buckets == nil {
		return registry.Warehouse{}, nserr.Unsupportedf("this server has no warehouse storage configured")
	}
	bucket, rootURI, err := s.buckets.Resolve(req.ID, req.Bucket)
	if err != nil {
		return registry.Warehouse{}, err
	}
	// Parent exists: the same answer for every caller, naming the fix. A project being deleted
	// exists here (only an authorized caller learns of the delete, below).
	project, err := s.readParentProject(ctx, req.Project)
	if err != nil {
		return registry.Warehouse{}, err
	}
	// Authorization.
	if err := s.authz.Check(ctx, p, authz.WarehouseCreate, authz.ProjectObject(req.Project)); err != nil {
		return registry.Warehouse{}, err
	}
	// Conflicts. A project already being deleted refuses before a bucket is made for nothing.
	if project.Deleting {
		return registry.Warehouse{}, projectBeingDeleted(req.Project)
	}
	all, err := s.warehouses(ctx, true)
	if err != nil {
		return registry.Warehouse{}, err
	}
	for _, w := range all {
		if w.ID == req.ID {
			if w.Project != req.Project {
				return registry.Warehouse{}, nserr.NamespaceAlreadyExistsf("warehouse %q already exists in another project", req.ID)
			}
			return registry.Warehouse{}, nserr.NamespaceAlreadyExistsf("warehouse %q already exists in project %q", req.ID, req.Project)
		}
	}
	// A bucket is answered by its name only: the reason it is refused (the catalog's own paths,
	// another project's claim) is for the log.
	public := publicBucketName(bucket)
	if why := s.buckets.Reserved(bucket); why != "" {
		s.log.InfoContext(ctx, "warehouse create refused: reserved bucket", "warehouse", req.ID, "bucket", bucket, "reason", why)
		return registry.Warehouse{}, nserr.InvalidInputf("bucket %q is reserved for the catalog's own use: choose another", public)
	}
	for _, w := range all {
		if s.buckets.Shared(w.Bucket, bucket) {
			s.log.InfoContext(ctx, "warehouse create refused: bucket already claimed", "warehouse", req.ID, "bucket", bucket, "claimed_by", w.ID, "project", w.Project)
			return registry.Warehouse{}, errBucketUnavailable(public)
		}
	}
	// Write: the claim first (exactly one of racing creates gets the bucket), then the bucket,
	// then the record. Every failure from here undoes what this create made, newest first: the
	// bucket only if this create made it and it is still empty, then the claim.
	token, err := s.claimBucket(ctx, bucket, req.ID)
	if err != nil {
		return registry.Warehouse{}, err
	}
	made := false
	undo := func(why string, cause error) {
		s.releaseBucket(ctx, bucket, req.ID, made)
		s.releaseClaim(ctx, bucket, req.ID, token)
		s.log.WarnContext(ctx, "warehouse create failed and was undone", "warehouse", req.ID, "project", req.Project,
			"bucket", bucket, "bucket_made", made, "step", why, "error", cause.Error())
	}
	// The bucket step runs to its end whatever the client does: cancelled mid-call, an S3
	// MakeBucket can land while answering the context's error, so the bucket would exist but be
	// reported unmade, and the undo below would keep it (issue 11 item 12). Every later step
	// that fails undoes what this one made.
	if made, err = s.buckets.Ensure(context.WithoutCancel(ctx), bucket); err != nil {
		undo("bucket", err)
		return registry.Warehouse{}, err
	}
	rec := registry.Warehouse{
		ID: req.ID, Project: req.Project, Bucket: bucket, RootURI: rootURI,
		Status: registry.StatusActive, CreatedAt: s.now().UTC(), Protected: req.Protected,
	}
	if err := registry.Create(ctx, s.store, registry.WarehouseKey(req.ID), rec); err != nil {
		if errors.Is(err, registry.ErrExists) {
			err = nserr.NamespaceAlreadyExistsf("warehouse %q already exists", req.ID)
		} else {
			err = registryError(err)
		}
		undo("record", err)
		return registry.Warehouse{}, err
	}
	if testHookWarehouseRecordWritten != nil {
		testHookWarehouseRecordWritten(req.ID)
	}
	// Parent still exists, now that the record is written: a project delete that listed the
	// warehouses before this write has marked the project Deleting by now (or deleted it), so this
	// re-read backs out of exactly the creates that delete did not see (DeleteProject has the
	// argument).
	if err := s.parentStillThere(ctx, req.Project); err != nil {
		if derr := registry.Delete(context.WithoutCancel(ctx), s.store, registry.WarehouseKey(req.ID)); derr != nil {
			s.log.ErrorContext(ctx, "undoing a warehouse create in a project being deleted failed: the warehouse record may outlive its project",
				"warehouse", req.ID, "project", req.Project, "error", derr.Error())
			return registry.Warehouse{}, err // the record stays: so do its claim and bucket
		}
		undo("project gone or being deleted", err)
		return registry.Warehouse{}, err
	}
	// Tuples: owner plus the project edge, in one write; without them nobody could reach it.
	if err := s.authz.SeedCreate(ctx, p, authz.WarehouseObject(req.ID), authz.ProjectObject(req.Project)); err != nil {
		if derr := registry.Delete(context.WithoutCancel(ctx), s.store, registry.WarehouseKey(req.ID)); derr != nil {
			s.log.ErrorContext(ctx, "undoing a warehouse create failed", "warehouse", req.ID, "error", derr.Error())
			return registry.Warehouse{}, err
		}
		undo("tuples", err)
		return registry.Warehouse{}, err
	}
	s.emit(ctx, EventWarehouseCreated, p, authz.WarehouseObject(req.ID).String(), map[string]string{
		"project": req.Project, "bucket": bucket, "root_uri": rootURI,
	})
	return rec, nil
}

// ListWarehouses lists the warehouses the caller may see (optionally of one project), by id. The
// page is filled after filtering, so hidden warehouses neither shorten pages nor show in cursors.
func (s *Service) ListWarehouses(ctx context.Context, p authz.Principal, project string, page Page) ([]registry.Warehouse, string, error) {
	p, err := s.caller(p)
	if err != nil {
		return nil, "", err
	}
	if project != "" {
		if err := projectShape(project); err != nil {
			return nil, "", err
		}
	}
	all, err := s.warehouses(ctx, false)
	if err != nil {
		return nil, "", err
	}
	var candidates []registry.Warehouse
	for _, w := range all {
		if (project == "" || w.Project == project) && (page.Token == "" || w.ID > page.Token) {
			candidates = append(candidates, w)
		}
	}
	limit := page.limit()
	var out []registry.Warehouse
	for len(candidates) > 0 && len(out) <= limit {
		chunk := candidates[:min(len(candidates), limit+1-len(out))]
		candidates = candidates[len(chunk):]
		objs := make([]authz.Object, len(chunk))
		for i, w := range chunk {
			objs[i] = authz.WarehouseObject(w.ID)
		}
		allowed, err := s.authz.Filter(ctx, p, authz.WarehouseListEntry, objs)
		if err != nil {
			return nil, "", err
		}
		for _, w := range chunk {
			if slices.Contains(allowed, authz.WarehouseObject(w.ID)) {
				out = append(out, w)
			}
		}
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// DescribeWarehouse is one warehouse. Authorization (warehouse.describe) is its door's guard
// (guards.ControlDoors) and runs first: a reader door, 403 before 404.
func (s *Service) DescribeWarehouse(ctx context.Context, p authz.Principal, id string) (registry.Warehouse, error) {
	if _, err := s.caller(p); err != nil {
		return registry.Warehouse{}, err
	}
	if err := warehouseShape(id); err != nil {
		return registry.Warehouse{}, err
	}
	return s.readWarehouse(ctx, id)
}

// DeleteWarehouse deletes a warehouse record, its bindings (with cascade) and its tuples, and its
// bytes only with purge_bucket.
func (s *Service) DeleteWarehouse(ctx context.Context, p authz.Principal, id string, opts DeleteWarehouse, drop NamespaceDropper) (DeletedWarehouse, error) {
	rec, err := s.warehouseForAdmin(ctx, p, id, authz.WarehouseDelete)
	if err != nil {
		return DeletedWarehouse{}, err
	}
	if rec.Protected && !opts.Force {
		return DeletedWarehouse{}, nserr.NamespaceNotEmptyf("warehouse %q is protected: disarm it (POST /v1/warehouses/%s/protection) or delete with force=true", id, id)
	}
	bindings, err := s.bindingsOf(ctx, id)
	if err != nil {
		return DeletedWarehouse{}, err
	}
	names := make([]string, len(bindings))
	for i, b := range bindings {
		names[i] = b.TopNamespace
	}
	if len(bindings) > 0 && !opts.Cascade {
		return DeletedWarehouse{}, nserr.NamespaceNotEmptyf("warehouse %q still holds namespaces %s: drop them first, or delete with cascade=true",
			id, strings.Join(names, ", "))
	}
	if opts.PurgeBucket {
		if s.buckets == nil {
			return DeletedWarehouse{}, nserr.Unsupportedf("this server has no warehouse storage configured")
		}
		public := publicBucketName(rec.Bucket)
		if why := s.buckets.Reserved(rec.Bucket); why != "" {
			s.log.WarnContext(ctx, "warehouse purge refused: reserved bucket", "warehouse", id, "bucket", rec.Bucket, "reason", why)
			return DeletedWarehouse{}, nserr.InvalidInputf("bucket %q is reserved for the catalog's own use and is never purged: delete without purge_bucket", public)
		}
		all, err := s.warehouses(ctx, true)
		if err != nil {
			return DeletedWarehouse{}, err
		}
		// Warehouses recorded before one claim per bucket was enforced may share one. Siblings of
		// this project are named (the caller administers them); other projects' are not.
		var siblings []string
		others := false
		for _, w := range all {
			if w.ID == id || !s.buckets.Shared(w.Bucket, rec.Bucket) {
				continue
			}
			if w.Project == rec.Project {
				siblings = append(siblings, w.ID)
			} else {
				others = true
			}
		}
		if len(siblings) > 0 || others {
			s.log.WarnContext(ctx, "warehouse purge refused: bucket shared", "warehouse", id, "bucket", rec.Bucket,
				"siblings", strings.Join(siblings, ","), "other_projects", others)
			msg := "bucket " + strconv.Quote(public) + " is shared with another warehouse"
			if len(siblings) > 0 && !others {
				msg = "bucket " + strconv.Quote(public) + " is also claimed by warehouses " + strings.Join(siblings, ", ")
			}
			return DeletedWarehouse{}, nserr.NamespaceNotEmptyf("%s: delete without purge_bucket", msg)
		}
		// Only a bucket the catalog claimed for this warehouse (made, or adopted empty) is purged:
		// everything in it was written through the warehouse.
		owned, err := s.ownsBucket(ctx, rec.Bucket, id)
		if err != nil {
			return DeletedWarehouse{}, err
		}
		if !owned {
			s.log.WarnContext(ctx, "warehouse purge refused: no claim proves the catalog made the bucket", "warehouse", id, "bucket", rec.Bucket)
			return DeletedWarehouse{}, nserr.NamespaceNotEmptyf("bucket %q was not made by this catalog for warehouse %q (it predates bucket claims), so it is never purged: delete without purge_bucket and clear the bucket by hand", public, id)
		}
	}
	if len(bindings) > 0 && drop == nil {
		return DeletedWarehouse{}, nserr.Unsupportedf("cascading over bound namespaces (%s) is not supported by this server yet", strings.Join(names, ", "))
	}
	out := DeletedWarehouse{Warehouse: rec}
	for _, b := range bindings {
		if err := drop.DropBoundNamespace(ctx, b); err != nil {
			return out, err
		}
		removed, err := s.authz.RevokeAll(ctx, authz.NamespaceObject([]string{b.TopNamespace}))
		out.TuplesRevoked += len(removed)
		if err != nil {
			return out, err
		}
		if err := registry.Delete(ctx, s.store, registry.BindingKey(b.TopNamespace)); err != nil {
			return out, registryError(err)
		}
		out.NamespacesDropped = append(out.NamespacesDropped, b.TopNamespace)
		s.emit(ctx, EventWarehouseUnbound, p, authz.WarehouseObject(id).String(), map[string]string{"namespace": b.TopNamespace})
	}
	removed, err := s.authz.RevokeAll(ctx, authz.WarehouseObject(id))
	out.TuplesRevoked += len(removed)
	if err != nil {
		return out, err
	}
	if err := registry.Delete(ctx, s.store, registry.WarehouseKey(id)); err != nil {
		return out, registryError(err)
	}
	if opts.PurgeBucket {
		n, err := s.buckets.Purge(ctx, rec.Bucket)
		out.ObjectsPurged = n
		if err != nil {
			// The claim stays: it names a warehouse that is gone, so it goes stale, and until then
			// no other warehouse takes the half-purged bucket.
			s.log.ErrorContext(ctx, "warehouse deleted but its bucket purge failed", "warehouse", id, "bucket", rec.Bucket, "error", err.Error())
			return out, err
		}
		out.BucketPurged = true
	}
	// The bucket is no longer this warehouse's. Left unpurged it still holds the warehouse's
	// bytes: a later create adopts only an empty bucket, so nobody inherits them.
	s.releaseClaim(ctx, rec.Bucket, id, "")
	s.emit(ctx, EventWarehouseDeleted, p, authz.WarehouseObject(id).String(), map[string]string{
		"project": rec.Project, "bucket": rec.Bucket, "cascade": strconv.FormatBool(opts.Cascade),
		"purge_bucket": strconv.FormatBool(opts.PurgeBucket), "force": strconv.FormatBool(opts.Force),
		"namespaces_dropped": strings.Join(out.NamespacesDropped, ","), "objects_purged": strconv.FormatInt(out.ObjectsPurged, 10),
	})
	return out, nil
}

// SetWarehouseStatus quarantines (active=false) or restores a warehouse; idempotent. The flip is an
// ETag-guarded read-modify-write, so it never undoes a concurrent protection change.
func (s *Service) SetWarehouseStatus(ctx context.Context, p authz.Principal, id string, active bool) (registry.Warehouse, error) {
	door, status, typ := authz.WarehouseDeactivate, registry.StatusDeactivated, EventWarehouseDeactivated
	if active {
		door, status, typ = authz.WarehouseActivate, registry.StatusActive, EventWarehouseActivated
	}
	return s.mutateWarehouse(ctx, p, id, door, typ, func(w *registry.Warehouse) bool {
		changed := w.Active() != active
		w.Status = status
		return changed
	})
}

// SetWarehouseProtection arms or disarms deletion protection (gated like the delete).
func (s *Service) SetWarehouseProtection(ctx context.Context, p authz.Principal, id string, protected bool) (registry.Warehouse, error) {
	typ := EventWarehouseUnprotected
	if protected {
		typ = EventWarehouseProtected
	}
	return s.mutateWarehouse(ctx, p, id, authz.WarehouseDelete, typ, func(w *registry.Warehouse) bool {
		changed := w.Protected != protected
		w.Protected = protected
		return changed
	})
}

func (s *Service) mutateWarehouse(ctx context.Context, p authz.Principal, id string, door authz.Action, event string, fn func(*registry.Warehouse) bool) (registry.Warehouse, error) {
	if _, err := s.warehouseForAdmin(ctx, p, id, door); err != nil {
		return registry.Warehouse{}, err
	}
	changed := false
	rec, err := registry.Mutate(ctx, s.store, registry.WarehouseKey(id), func(w *registry.Warehouse) error {
		changed = fn(w) // fn sees each re-read; the last run is the one written
		return nil
	})
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Warehouse{}, nserr.ConcurrentModificationf("warehouse %q was deleted while being changed; retry", id)
	}
	if err != nil {
		return registry.Warehouse{}, registryError(err)
	}
	if changed {
		s.emit(ctx, event, p, authz.WarehouseObject(id).String(), map[string]string{"project": rec.Project})
	}
	return rec, nil
}

// warehouseForAdmin runs the front guards of a destructive warehouse door (checked on its
// project), answering a denial exactly like a missing warehouse. Its authorization stays here,
// not in the door's guard chain: the object it is checked on (the warehouse's project) is named
// only by the warehouse record this reads (guards.ControlDoors says so for each door).
func (s *Service) warehouseForAdmin(ctx context.Context, p authz.Principal, id string, door authz.Action) (registry.Warehouse, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Warehouse{}, err
	}
	if err := warehouseShape(id); err != nil {
		return registry.Warehouse{}, err
	}
	rec, err := s.readWarehouse(ctx, id)
	if err != nil {
		return registry.Warehouse{}, err
	}
	if err := s.authz.Check(ctx, p, door, authz.ProjectObject(rec.Project)); err != nil {
		return registry.Warehouse{}, hidden(err, warehouseMissing(id))
	}
	return rec, nil
}

func (s *Service) readWarehouse(ctx context.Context, id string) (registry.Warehouse, error) {
	rec, _, err := registry.Read[registry.Warehouse](ctx, s.store, registry.WarehouseKey(id))
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Warehouse{}, warehouseMissing(id)
	}
	if err != nil {
		return registry.Warehouse{}, registryError(err)
	}
	return rec, nil
}

// warehouses lists every warehouse record by id. strict refuses (503) when any record is
// unreadable: a destructive or exclusive decision must not rest on a short list.
func (s *Service) warehouses(ctx context.Context, strict bool) ([]registry.Warehouse, error) {
	listed, err := registry.List[registry.Warehouse](ctx, s.store, registry.WarehousesPrefix)
	if err != nil {
		return nil, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		if strict {
			return nil, nserr.ServiceUnavailablef("unreadable warehouse records (%s): refusing to decide on a partial list", strings.Join(listed.Skipped, ", "))
		}
		s.log.WarnContext(ctx, "unreadable warehouse records skipped", "keys", strings.Join(listed.Skipped, ","))
	}
	out := listed.Records
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// bindingsOf lists the namespaces bound to warehouse id; any unreadable binding refuses (503).
func (s *Service) bindingsOf(ctx context.Context, id string) ([]registry.Binding, error) {
	listed, err := registry.List[registry.Binding](ctx, s.store, registry.BindingsPrefix)
	if err != nil {
		return nil, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		return nil, nserr.ServiceUnavailablef("unreadable namespace bindings (%s): refusing to decide on a partial list", strings.Join(listed.Skipped, ", "))
	}
	var out []registry.Binding
	for _, b := range listed.Records {
		if b.WarehouseID == id {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TopNamespace < out[j].TopNamespace })
	return out, nil
}
