package handlers

// GET /v1/capabilities: which operations of the pinned Lance Namespace spec this server backs and
// which features it has, derived from what the doors themselves consult (unbackedOperations, the
// index dispatch of namespace), so the answer cannot drift from what the doors do.

import (
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/spec"
)

// unbackedOperations are the spec operations this server does not back, each with why: the one
// list both the doors (unbacked answers their 406 with this reason) and GET /v1/capabilities
// read. Backing an operation is removing it here; the route sweep
// (server.TestUnbackedRegistryMatchesTheDoors) checks that exactly these answer 406.
var unbackedOperations = map[string]string{}

// UnbackedOperations is a copy of the registry: operation id → why it is not backed.
func UnbackedOperations() map[string]string {
	out := make(map[string]string, len(unbackedOperations))
	for k, v := range unbackedOperations {
		out[k] = v
	}
	return out
}

// Capabilities is what GET /v1/capabilities answers for this server's spec doors.
func (s *Server) Capabilities() (controlapi.Capabilities, error) {
	pin := spec.LanceNamespace()
	out := controlapi.Capabilities{
		Server: "lancecat",
		Spec: controlapi.CapabilitiesSpec{
			Name: pin.Name, Version: pin.Version, InfoVersion: ptr(pin.InfoVersion), Operations: pin.Operations,
		},
		Operations: []controlapi.CapabilitiesOperation{},
		Features: controlapi.CapabilitiesFeatures{
			Authorization: s.authorizer != nil && s.authorizer.Enabled(),
			IndexTypes:    []string{},
		},
	}
	doc, err := nsapi.GetSpec()
	if err != nil {
		return out, err
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := controlapi.CapabilitiesOperation{Id: op.OperationID, Method: strings.ToUpper(method), Path: path, Backed: true}
			if s.catalog == nil {
				o.Backed, o.Reason = false, ptr("this server has no catalog")
			} else if why, ok := unbackedOperations[op.OperationID]; ok {
				o.Backed, o.Reason = false, ptr(why)
			}
			out.Operations = append(out.Operations, o)
		}
	}
	slices.SortFunc(out.Operations, func(a, b controlapi.CapabilitiesOperation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	backed := map[string]bool{}
	for _, o := range out.Operations {
		backed[o.Id] = o.Backed
	}
	f := &out.Features
	// Managed versioning is create/describe/list_table_version with the catalog as the commit point.
	f.ManagedVersioning = backed["CreateTableVersion"] && backed["DescribeTableVersion"]
	f.Branches = backed["CreateTableBranch"] && backed["ListTableBranches"] && backed["DeleteTableBranch"]
	f.Tags = backed["CreateTableTag"] && backed["ListTableTags"]
	f.MultiTableCommit = backed["BatchCommitTables"] && backed["BatchCreateTableVersions"]
	// Vended credentials: short-lived, table-scoped ones (the static opt-in is not vending).
	vending := s.vending()
	f.CredentialVending = &vending
	f.VendedCredentials = backed["DescribeTable"] && vending.Mode == controlapi.VendingSTS
	if backed["CreateTableIndex"] {
		f.IndexTypes = namespace.IndexTypes()
	}
	return out, nil
}

// GetCapabilities is GET /v1/capabilities.
func (h *Control) GetCapabilities(c echo.Context) error {
	caps, err := h.spec.Capabilities()
	if err != nil {
		return err
	}
	return writeJSON(c, caps)
}
