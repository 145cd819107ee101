package control

// GET /v1/capabilities: which operations of the pinned Lance Namespace spec this server backs and
// which features it has, derived from what the doors themselves consult (the spec doors' unbacked
// registry, handlers.UnbackedOperations; the index types the catalog builds, catalog.IndexTypes),
// so the answer cannot drift from what the doors do.

import (
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/spec"
)

// Capabilities is what GET /v1/capabilities answers for the spec doors built from s.
func (s Options) Capabilities() (controlapi.Capabilities, error) {
	pin := spec.LanceNamespace()
	out := controlapi.Capabilities{
		Server: "lancecat",
		Spec: controlapi.CapabilitiesSpec{
			Name: pin.Name, Version: pin.Version, InfoVersion: new(pin.InfoVersion), Operations: pin.Operations,
		},
		Operations: []controlapi.CapabilitiesOperation{},
		Features: controlapi.CapabilitiesFeatures{
			Authorization: s.Authorizer != nil && s.Authorizer.Enabled(),
			IndexTypes:    []string{},
		},
	}
	unbacked := handlers.UnbackedOperations()
	doc, err := nsapi.GetSpec()
	if err != nil {
		return out, err
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := controlapi.CapabilitiesOperation{Id: op.OperationID, Method: strings.ToUpper(method), Path: path, Backed: true}
			if s.Catalog == nil {
				o.Backed, o.Reason = false, new("this server has no catalog")
			} else if why, ok := unbacked[op.OperationID]; ok {
				o.Backed, o.Reason = false, new(why)
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
		f.IndexTypes = catalog.IndexTypes(s.Catalog)
	}
	return out, nil
}

// vending is the capabilities' account of credential vending.
func (s Options) vending() controlapi.CredentialVending {
	if s.Vendor == nil {
		return controlapi.CredentialVending{Mode: controlapi.VendingNone,
			Reason: new("storage_options carry connection hints only: clients bring their own credentials")}
	}
	return s.Vendor.Vending()
}

// GetCapabilities is GET /v1/capabilities.
func (h *Control) GetCapabilities(c echo.Context) error {
	caps, err := h.spec.Capabilities()
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, caps)
}
