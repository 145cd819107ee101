package governance

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Events of the lifecycle changes made through the Lance spec's doors.
const (
	EventNamespaceCreated  = "namespace_created"
	EventNamespaceDropped  = "namespace_dropped"
	EventTableCreated      = "table_created"
	EventTableDeclared     = "table_declared"
	EventTableRegistered   = "table_registered"
	EventTableDropped      = "table_dropped"
	EventTableDeregistered = "table_deregistered"
	EventTableRenamed      = "table_renamed"
)

// Changed records a lifecycle change a spec door made (handlers.ChangeRecorder): the event names
// the object as the authorization model does (table:…, namespace:…).
func (s *Service) Changed(ctx context.Context, p authz.Principal, event, kind string, id ident.ID, attrs map[string]string) {
	obj := authz.NamespaceObject(id)
	if kind == registry.KindTable {
		obj = authz.TableObject(id)
	}
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs["id"] = id.Join(s.delim)
	s.emit(ctx, event, p, obj.String(), attrs)
}
