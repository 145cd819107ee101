package control

// Protection and maintenance policies of tables and namespaces (and projects' policies): thin
// adapters over governance, which runs the guards (identity, shape, authorization by the door
// table, existence) and keeps the records.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

func protectionModel(p registry.Protection) controlapi.Protection {
	kind := controlapi.ProtectionKind(p.Kind)
	out := controlapi.Protection{Id: ctlNonNil(p.ID), Kind: &kind, Protected: p.Protected, SetBy: ctlOptional(p.SetBy), SetAt: p.SetAt}
	return out
}

func (h *Control) describeProtection(c echo.Context, op, kind string, delimiter *string) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	id, err := h.pathID(c, delimiter)
	if err != nil {
		return err
	}
	rec, err := h.gov.DescribeProtection(c.Request().Context(), ctlPrincipal(c), kind, id)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, protectionModel(rec))
}

func (h *Control) setProtection(c echo.Context, op, kind string, delimiter *string) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	id, err := h.pathID(c, delimiter)
	if err != nil {
		return err
	}
	var req controlapi.SetProtectionRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	rec, err := h.gov.SetProtection(c.Request().Context(), ctlPrincipal(c), kind, id, req.Protected)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, protectionModel(rec))
}

// DescribeTableProtection is GET /v1/table/{id}/protection.
func (h *Control) DescribeTableProtection(c echo.Context, _ controlapi.Id, params controlapi.DescribeTableProtectionParams) error {
	return h.describeProtection(c, "DescribeTableProtection", registry.KindTable, params.Delimiter)
}

// SetTableProtection is POST /v1/table/{id}/protection.
func (h *Control) SetTableProtection(c echo.Context, _ controlapi.Id, params controlapi.SetTableProtectionParams) error {
	return h.setProtection(c, "SetTableProtection", registry.KindTable, params.Delimiter)
}

// DescribeNamespaceProtection is GET /v1/namespace/{id}/protection.
func (h *Control) DescribeNamespaceProtection(c echo.Context, _ controlapi.Id, params controlapi.DescribeNamespaceProtectionParams) error {
	return h.describeProtection(c, "DescribeNamespaceProtection", registry.KindNamespace, params.Delimiter)
}

// SetNamespaceProtection is POST /v1/namespace/{id}/protection.
func (h *Control) SetNamespaceProtection(c echo.Context, _ controlapi.Id, params controlapi.SetNamespaceProtectionParams) error {
	return h.setProtection(c, "SetNamespaceProtection", registry.KindNamespace, params.Delimiter)
}

func policyModel(p governance.EffectivePolicy) controlapi.EffectivePolicy {
	var out controlapi.EffectivePolicy
	s := p.Policy
	out.Policy = controlapi.Policy{
		RetentionDays: s.RetentionDays, RetainVersions: s.RetainVersions, CompactEnabled: s.CompactEnabled,
		CompactIntervalHours: s.CompactIntervalHours, TargetRowsPerFragment: s.TargetRowsPerFragment,
		CleanupEnabled: s.CleanupEnabled, OptimizeIndicesEnabled: s.OptimizeIndicesEnabled,
	}
	out.Source.Kind = controlapi.EffectivePolicySourceKind(p.Source.Kind)
	if p.Source.ID != nil {
		id := p.Source.ID
		out.Source.Id = &id
	}
	out.Source.SetBy = ctlOptional(p.Source.SetBy)
	if !p.Source.UpdatedAt.IsZero() {
		at := p.Source.UpdatedAt
		out.Source.UpdatedAt = &at
	}
	return out
}

func (h *Control) setPolicy(c echo.Context, op, kind string, id ident.ID) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	// Decoded strictly by governance: an unknown knob is refused, not ignored.
	body, err := handlers.ReadBody(c)
	if err != nil {
		return err
	}
	eff, err := h.gov.SetPolicyJSON(c.Request().Context(), ctlPrincipal(c), kind, id, body)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, policyModel(eff))
}

func (h *Control) describePolicy(c echo.Context, op, kind string, id ident.ID) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	eff, err := h.gov.DescribePolicy(c.Request().Context(), ctlPrincipal(c), kind, id)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, policyModel(eff))
}

func (h *Control) deletePolicy(c echo.Context, op, kind string, id ident.ID) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	if err := h.gov.DeletePolicy(c.Request().Context(), ctlPrincipal(c), kind, id); err != nil {
		return err
	}
	return handlers.WriteJSON(c, struct{}{})
}

// withPathID parses the route's id, then runs fn with it.
func (h *Control) withPathID(c echo.Context, delimiter *string, fn func(ident.ID) error) error {
	id, err := h.pathID(c, delimiter)
	if err != nil {
		return err
	}
	return fn(id)
}

// SetTablePolicy is POST /v1/table/{id}/policy/set.
func (h *Control) SetTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.SetTablePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error { return h.setPolicy(c, "SetTablePolicy", registry.KindTable, id) })
}

// DescribeTablePolicy is POST /v1/table/{id}/policy/describe.
func (h *Control) DescribeTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.DescribeTablePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		return h.describePolicy(c, "DescribeTablePolicy", registry.KindTable, id)
	})
}

// DeleteTablePolicy is POST /v1/table/{id}/policy/delete.
func (h *Control) DeleteTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.DeleteTablePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		return h.deletePolicy(c, "DeleteTablePolicy", registry.KindTable, id)
	})
}

// SetNamespacePolicy is POST /v1/namespace/{id}/policy/set.
func (h *Control) SetNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.SetNamespacePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		return h.setPolicy(c, "SetNamespacePolicy", registry.KindNamespace, id)
	})
}

// DescribeNamespacePolicy is POST /v1/namespace/{id}/policy/describe.
func (h *Control) DescribeNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.DescribeNamespacePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		return h.describePolicy(c, "DescribeNamespacePolicy", registry.KindNamespace, id)
	})
}

// DeleteNamespacePolicy is POST /v1/namespace/{id}/policy/delete.
func (h *Control) DeleteNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.DeleteNamespacePolicyParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		return h.deletePolicy(c, "DeleteNamespacePolicy", registry.KindNamespace, id)
	})
}

// UndropTable is POST /v1/table/{id}/undrop: re-register a recoverably dropped table.
func (h *Control) UndropTable(c echo.Context, _ controlapi.Id, params controlapi.UndropTableParams) error {
	id, err := h.pathID(c, params.Delimiter)
	if err != nil {
		return err
	}
	if h.trash == nil {
		return handlers.NotBacked(c, "UndropTable")
	}
	rec, err := h.trash.UndropTable(c.Request().Context(), ctlPrincipal(c), id)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, controlapi.UndropResponse{Id: ctlNonNil(rec.ID), Location: ctlOptional(rec.Location)})
}
