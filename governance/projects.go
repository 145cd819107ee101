package governance

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// ProjectView is a project with its warehouses.
type ProjectView struct {
	registry.Project
	Warehouses []registry.Warehouse
}

// projectShape is the shape guard of a project id (guards.ProjectShape).
func projectShape(id string) error { return guards.ProjectShape(id) }

// projectMissing is the answer for a project that does not exist, and (on destructive doors) for
// one the caller may not act on: the two must be indistinguishable (guards.ProjectMissing).
func projectMissing(id string) error { return guards.ProjectMissing(id) }

// CreateProject mints project id: only estate admins may, and of any number of racing creates of
// one id exactly one wins (the others are 409). The creator becomes the project's admin.
func (s *Service) CreateProject(ctx context.Context, p authz.Principal, id string, protected bool) (registry.Project, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Project{}, err
	}
	if err := projectShape(id); err != nil {
		return registry.Project{}, err
	}
	if err := s.authz.Check(ctx, p, authz.ProjectCreate, authz.Catalog); err != nil {
		return registry.Project{}, err
	}
	rec := registry.Project{ID: id, CreatedAt: s.now().UTC(), CreatedBy: actor(p), Protected: protected}
	if err := registry.Create(ctx, s.store, registry.ProjectKey(id), rec); err != nil {
		if errors.Is(err, registry.ErrExists) {
			// A project being deleted still exists. A create never lifts the mark: the delete that
			// holds it may already have listed no warehouses and be about to delete the record, and a
			// warehouse create let through by a lifted mark would then outlive its project. A mark
			// left by a crashed delete is cleared by the next DELETE, which also finishes the job.
			if cur, _, rerr := registry.Read[registry.Project](ctx, s.store, registry.ProjectKey(id)); rerr == nil && cur.Deleting {
				return registry.Project{}, nserr.NamespaceAlreadyExistsf("project %q already exists and is being deleted: retry once the delete is done, or finish an interrupted one with DELETE /v1/projects/%s", id, id)
			}
			return registry.Project{}, nserr.NamespaceAlreadyExistsf("project %q already exists", id)
		}
		return registry.Project{}, registryError(err)
	}
	if err := s.authz.SeedCreate(ctx, p, authz.ProjectObject(id), authz.Object{}); err != nil {
		// A project nobody administers would be unreachable: undo the create.
		if derr := registry.Delete(ctx, s.store, registry.ProjectKey(id)); derr != nil {
			s.log.ErrorContext(ctx, "undoing a project create failed", "project", id, "error", derr.Error())
		}
		return registry.Project{}, err
	}
	s.emit(ctx, EventProjectCreated, p, authz.ProjectObject(id).String(), map[string]string{"protected": strconv.FormatBool(protected)})
	return rec, nil
}

// ListProjects lists projects by id (estate admins only: project.list on the catalog, checked
// by its door, guards.ControlDoors).
func (s *Service) ListProjects(ctx context.Context, p authz.Principal, page Page) ([]ProjectView, string, error) {
	if _, err := s.caller(p); err != nil {
		return nil, "", err
	}
	projects, err := s.projects(ctx)
	if err != nil {
		return nil, "", err
	}
	warehouses, err := s.warehouses(ctx, false)
	if err != nil {
		return nil, "", err
	}
	var out []ProjectView
	next := ""
	for _, pr := range projects {
		if page.Token != "" && pr.ID <= page.Token {
			continue
		}
		if len(out) == page.limit() {
			next = out[len(out)-1].ID
			break
		}
		out = append(out, ProjectView{Project: pr, Warehouses: ofProject(warehouses, pr.ID)})
	}
	return out, next, nil
}

// DescribeProject is one project and its warehouses (estate admins only: project.describe on the
// catalog, checked by its door, guards.ControlDoors).
func (s *Service) DescribeProject(ctx context.Context, p authz.Principal, id string) (ProjectView, error) {
	if _, err := s.caller(p); err != nil {
		return ProjectView{}, err
	}
	if err := projectShape(id); err != nil {
		return ProjectView{}, err
	}
	rec, err := s.readProject(ctx, id)
	if err != nil {
		return ProjectView{}, err
	}
	warehouses, err := s.warehouses(ctx, false)
	if err != nil {
		return ProjectView{}, err
	}
	return ProjectView{Project: rec, Warehouses: ofProject(warehouses, id)}, nil
}

// DeleteProject retires an empty project. It never cascades: while the project holds warehouses it
// refuses with 409 naming them. force overrides protection and nothing else.
//
// A delete races warehouse creates, and the control root has no conditional delete, so it sets a
// tombstone first (Project.Deleting, an ETag-guarded write), then lists the warehouses, and deletes
// the record only if none belongs to the project. CreateWarehouse writes its record first and
// re-reads the project after (parentStillThere). Why no warehouse outlives its project: take the
// create's re-read.
//   - If it happens before the mark, the warehouse record was written before the mark, so before
//     this delete's listing: the delete sees the warehouse and refuses.
//   - If it happens after the mark, it sees Deleting (or, later, no record at all) and the create
//     deletes its own record and fails. (Or it sees the mark already lifted: this delete failed and
//     leaves the project in place, so the warehouse has its project.)
//
// This holds only while the mark stays on from this delete's mark to its record delete, which is
// why one delete at a time holds it (markProjectDeleting refuses a second one) and only the holder
// lifts it. A delete that crashed leaves the mark on: the project stays visible, warehouse creates
// in it answer 409, and the next DELETE after projectDeleteLease takes the mark over and finishes
// (or, finding warehouses, lifts it).
func (s *Service) DeleteProject(ctx context.Context, p authz.Principal, id string, force bool) (registry.Project, error) {
	rec, err := s.projectForAdmin(ctx, p, id)
	if err != nil {
		return registry.Project{}, err
	}
	if rec.Protected && !force {
		return registry.Project{}, projectProtected(id)
	}
	mark, err := s.markProjectDeleting(ctx, id, force)
	if err != nil {
		return registry.Project{}, err
	}
	// Every failure from here on lifts the mark, so the project is usable again (a retry redoes it).
	fail := func(err error) (registry.Project, error) {
		s.unmarkProjectDeleting(ctx, id, mark)
		return registry.Project{}, err
	}
	// A destructive decision reads every warehouse record: one it cannot read refuses.
	warehouses, err := s.warehouses(ctx, true)
	if err != nil {
		return fail(err)
	}
	if testHookProjectDeleteListed != nil {
		testHookProjectDeleteListed(id)
	}
	if held := ofProject(warehouses, id); len(held) > 0 {
		names := make([]string, len(held))
		for i, w := range held {
			names[i] = w.ID
		}
		return fail(nserr.NamespaceNotEmptyf("project %q still holds warehouses %s: delete them first (DELETE /v1/warehouses/{id}); a project delete never cascades",
			id, strings.Join(names, ", ")))
	}
	revoked, err := s.authz.RevokeAll(ctx, authz.ProjectObject(id))
	if err != nil {
		return fail(err)
	}
	if err := registry.Delete(ctx, s.store, registry.ProjectKey(id)); err != nil {
		return fail(registryError(err))
	}
	// The project's policy dies with it (a re-created project starts from the defaults).
	if err := s.ClearPolicy(ctx, registry.KindProject, ident.ID{id}); err != nil {
		s.log.ErrorContext(ctx, "deleting a deleted project's policy failed", "project", id, "error", err.Error())
	}
	s.emit(ctx, EventProjectDeleted, p, authz.ProjectObject(id).String(), map[string]string{
		"force": strconv.FormatBool(force), "tuples_revoked": strconv.Itoa(len(revoked)),
	})
	return rec, nil
}

// projectDeleteLease is how long a project delete's mark shuts out another delete. A delete does a
// handful of control-root calls and one authorizer call, far inside it; a mark older than this was
// left by a delete that died, and the next delete takes it over. (A delete still alive after the
// lease could lose the mark to a takeover that then lifts it: the one window left, and a wide one.)
const projectDeleteLease = 5 * time.Minute

// Test hooks, nil outside tests: they let a test run one door in the middle of another.
var (
	testHookProjectDeleteListed    func(project string)   // DeleteProject, after listing warehouses
	testHookWarehouseRecordWritten func(warehouse string) // CreateWarehouse, after writing its record
)

func projectProtected(id string) error {
	return nserr.NamespaceNotEmptyf("project %q is protected: disarm it (POST /v1/projects/%s/protection) or delete with force=true", id, id)
}

// errProjectDeleteInFlight stops the mark's read-modify-write when another delete holds the mark.
var errProjectDeleteInFlight = errors.New("another delete of the project is in flight")

// markProjectDeleting sets the tombstone (ETag-guarded, so it never undoes a concurrent protection
// change) and returns the mark's time, which names this delete's hold on it. Protection is
// re-checked on the record the mark is written to: an arm that raced the front guard wins.
func (s *Service) markProjectDeleting(ctx context.Context, id string, force bool) (time.Time, error) {
	now := s.now().UTC()
	_, err := registry.Mutate(ctx, s.store, registry.ProjectKey(id), func(r *registry.Project) error {
		if r.Protected && !force {
			return projectProtected(id)
		}
		if r.Deleting && r.DeletingSince != nil && now.Sub(*r.DeletingSince) < projectDeleteLease {
			return errProjectDeleteInFlight
		}
		r.Deleting, r.DeletingSince = true, &now
		return nil
	})
	switch {
	case errors.Is(err, registry.ErrNotFound):
		// Deleted since the front guard read it: the answer a later delete would get.
		return time.Time{}, projectMissing(id)
	case errors.Is(err, errProjectDeleteInFlight):
		return time.Time{}, nserr.ConcurrentModificationf("project %q is already being deleted; retry", id)
	case err != nil:
		return time.Time{}, registryError(err)
	}
	return now, nil
}

// unmarkProjectDeleting lifts this delete's mark; a mark another delete took over is left alone
// (that delete relies on it). Best effort: a mark it cannot lift is logged, and the next delete
// takes it over after projectDeleteLease.
func (s *Service) unmarkProjectDeleting(ctx context.Context, id string, mark time.Time) {
	// The caller's context may be what failed the delete: the mark is lifted regardless.
	ctx = context.WithoutCancel(ctx)
	_, err := registry.Mutate(ctx, s.store, registry.ProjectKey(id), func(r *registry.Project) error {
		if r.Deleting && r.DeletingSince != nil && r.DeletingSince.Equal(mark) {
			r.Deleting, r.DeletingSince = false, nil
		}
		return nil
	})
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		s.log.ErrorContext(ctx, "lifting a project's delete mark failed: warehouse creates in it refuse until a later delete takes the mark over",
			"project", id, "error", err.Error())
	}
}

// SetProjectProtection arms or disarms the project's deletion protection (gated like its delete).
func (s *Service) SetProjectProtection(ctx context.Context, p authz.Principal, id string, protected bool) (registry.Project, error) {
	if _, err := s.projectForAdmin(ctx, p, id); err != nil {
		return registry.Project{}, err
	}
	changed := false
	rec, err := registry.Mutate(ctx, s.store, registry.ProjectKey(id), func(r *registry.Project) error {
		changed = r.Protected != protected
		r.Protected = protected
		return nil
	})
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Project{}, projectMissing(id)
	}
	if err != nil {
		return registry.Project{}, registryError(err)
	}
	if changed {
		typ := EventProjectUnprotected
		if protected {
			typ = EventProjectProtected
		}
		s.emit(ctx, typ, p, authz.ProjectObject(id).String(), nil)
	}
	return rec, nil
}

// projectForAdmin reads the project of a destructive project door after its identity and shape
// guards. The door's authorization (project.delete, project.policy.*) is its guard chain's
// (guards.ControlDoors), which answers a denial exactly like a missing project: denied or
// missing, the caller gets the same 404 whichever runs first.
func (s *Service) projectForAdmin(ctx context.Context, p authz.Principal, id string) (registry.Project, error) {
	if _, err := s.caller(p); err != nil {
		return registry.Project{}, err
	}
	if err := projectShape(id); err != nil {
		return registry.Project{}, err
	}
	return s.readProject(ctx, id)
}

func (s *Service) readProject(ctx context.Context, id string) (registry.Project, error) {
	rec, _, err := registry.Read[registry.Project](ctx, s.store, registry.ProjectKey(id))
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Project{}, projectMissing(id)
	}
	if err != nil {
		return registry.Project{}, registryError(err)
	}
	return rec, nil
}

// readParentProject reads the project a warehouse is created in: 404 naming POST /v1/projects when
// it is missing, for every caller. A project being deleted is returned like any other.
func (s *Service) readParentProject(ctx context.Context, project string) (registry.Project, error) {
	rec, _, err := registry.Read[registry.Project](ctx, s.store, registry.ProjectKey(project))
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Project{}, nserr.NamespaceNotFoundf("project %q does not exist: create it first with POST /v1/projects", project)
	}
	if err != nil {
		return registry.Project{}, registryError(err)
	}
	return rec, nil
}

// parentStillThere is CreateWarehouse's re-read of its project after writing its record: nil when
// the project exists and no delete holds it. A missing project is the 404 of readParentProject; one
// being deleted is projectBeingDeleted.
func (s *Service) parentStillThere(ctx context.Context, project string) error {
	rec, err := s.readParentProject(ctx, project)
	if err != nil {
		return err
	}
	if rec.Deleting {
		return projectBeingDeleted(project)
	}
	return nil
}

// projectBeingDeleted answers a warehouse create in a project a delete holds. 409
// ConcurrentModification, not 404: the project still exists and the delete may yet refuse (it
// lifts the mark when the project holds warehouses), so "retry" is the true answer.
func projectBeingDeleted(project string) error {
	return nserr.ConcurrentModificationf("project %q is being deleted; retry (if this persists, a delete was interrupted: DELETE /v1/projects/%s again finishes it, or lifts the mark if the project holds warehouses)", project, project)
}

// projects lists every project record by id. A listing shown to a caller skips (and logs) a record
// it cannot read.
func (s *Service) projects(ctx context.Context) ([]registry.Project, error) {
	listed, err := registry.List[registry.Project](ctx, s.store, registry.ProjectsPrefix)
	if err != nil {
		return nil, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		s.log.WarnContext(ctx, "unreadable project records skipped", "keys", strings.Join(listed.Skipped, ","))
	}
	out := listed.Records
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func ofProject(warehouses []registry.Warehouse, project string) []registry.Warehouse {
	var out []registry.Warehouse
	for _, w := range warehouses {
		if w.Project == project {
			out = append(out, w)
		}
	}
	return out
}
