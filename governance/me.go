package governance

import (
	"context"

	"github.com/lancecat/lancecat/authz"
)

// Me is the caller as the catalog sees them.
type Me struct {
	Principal     string
	EstateAdmin   bool
	Authorization string // "disabled" or "openfga"
	Projects      []string
}

// DescribeMe answers who the caller is. It never fails on an authorization brownout: what cannot
// be checked is reported as not held.
func (s *Service) DescribeMe(ctx context.Context, p authz.Principal) (Me, error) {
	p, err := s.caller(p)
	if err != nil {
		return Me{}, err
	}
	if !s.authz.Enabled() {
		return Me{Principal: actor(p), EstateAdmin: true, Authorization: "disabled", Projects: []string{}}, nil
	}
	me := Me{Principal: p.String(), Authorization: "openfga", Projects: []string{}}
	if err := s.authz.Check(ctx, p, authz.ProjectList, authz.Catalog); err == nil {
		me.EstateAdmin = true
	}
	projects, err := s.projects(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "me: listing projects failed", "error", err.Error())
		return me, nil
	}
	objs := make([]authz.Object, len(projects))
	for i, pr := range projects {
		objs[i] = authz.ProjectObject(pr.ID)
	}
	member, err := s.authz.Filter(ctx, p, authz.ProjectMyPermissions, objs)
	if err != nil {
		s.log.WarnContext(ctx, "me: checking project memberships failed", "error", err.Error())
		return me, nil
	}
	for i, pr := range projects {
		for _, o := range member {
			if o == objs[i] {
				me.Projects = append(me.Projects, pr.ID)
				break
			}
		}
	}
	return me, nil
}

// ReadEvents returns control events after cursor (estate admins only).
func (s *Service) ReadEvents(ctx context.Context, p authz.Principal, cursor string, limit int) ([]Event, string, bool, error) {
	// events.read on the catalog is its door's guard (guards.ControlDoors).
	if _, err := s.caller(p); err != nil {
		return nil, "", false, err
	}
	return s.events.Read(ctx, cursor, limit)
}
