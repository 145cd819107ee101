package governance

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// ProjectView is a project with its warehouses.
type ProjectView struct {
	registry.Project
	Warehouses []registry.Warehouse
}

func projectShape(id string) error {
	if err := registry.ValidName(id); err != nil {
		return nserr.InvalidInputf("project id: %v", err)
	}
	return nil
}

// projectMissing is the answer for a project that does not exist, and (on destructive doors) for
// one the caller may not act on: the two must be indistinguishable.
func projectMissing(id string) error {
	return nserr.NamespaceNotFoundf("project %q does not exist", id)
}

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

// ListProjects lists projects by id (estate admins only).
func (s *Service) ListProjects(ctx context.Context, p authz.Principal, page Page) ([]ProjectView, string, error) {
	p, err := s.caller(p)
	if err != nil {
		return nil, "", err
	}
	if err := s.authz.Check(ctx, p, authz.ProjectList, authz.Catalog); err != nil {
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

// DescribeProject is one project and its warehouses (estate admins only).
func (s *Service) DescribeProject(ctx context.Context, p authz.Principal, id string) (ProjectView, error) {
	p, err := s.caller(p)
	if err != nil {
		return ProjectView{}, err
	}
	if err := projectShape(id); err != nil {
		return ProjectView{}, err
	}
	if err := s.authz.Check(ctx, p, authz.ProjectDescribe, authz.Catalog); err != nil {
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
func (s *Service) DeleteProject(ctx context.Context, p authz.Principal, id string, force bool) (registry.Project, error) {
	rec, err := s.projectForAdmin(ctx, p, id, authz.ProjectDelete)
	if err != nil {
		return registry.Project{}, err
	}
	if rec.Protected && !force {
		return registry.Project{}, nserr.NamespaceNotEmptyf("project %q is protected: disarm it (POST /v1/projects/%s/protection) or delete with force=true", id, id)
	}
	// A destructive decision reads every warehouse record: one it cannot read refuses.
	warehouses, err := s.warehouses(ctx, true)
	if err != nil {
		return registry.Project{}, err
	}
	if held := ofProject(warehouses, id); len(held) > 0 {
		names := make([]string, len(held))
		for i, w := range held {
			names[i] = w.ID
		}
		return registry.Project{}, nserr.NamespaceNotEmptyf("project %q still holds warehouses %s: delete them first (DELETE /v1/warehouses/{id}); a project delete never cascades",
			id, strings.Join(names, ", "))
	}
	revoked, err := s.authz.RevokeAll(ctx, authz.ProjectObject(id))
	if err != nil {
		return registry.Project{}, err
	}
	if err := registry.Delete(ctx, s.store, registry.ProjectKey(id)); err != nil {
		return registry.Project{}, registryError(err)
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

// SetProjectProtection arms or disarms the project's deletion protection (gated like its delete).
func (s *Service) SetProjectProtection(ctx context.Context, p authz.Principal, id string, protected bool) (registry.Project, error) {
	if _, err := s.projectForAdmin(ctx, p, id, authz.ProjectDelete); err != nil {
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

// projectForAdmin runs the front guards of a destructive project door: identity, shape, existence
// and authorization, answering a denial exactly like a missing project.
func (s *Service) projectForAdmin(ctx context.Context, p authz.Principal, id string, door authz.Action) (registry.Project, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Project{}, err
	}
	if err := projectShape(id); err != nil {
		return registry.Project{}, err
	}
	rec, err := s.readProject(ctx, id)
	if err != nil {
		return registry.Project{}, err
	}
	if err := s.authz.Check(ctx, p, door, authz.ProjectObject(id)); err != nil {
		return registry.Project{}, hidden(err, projectMissing(id))
	}
	return rec, nil
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
