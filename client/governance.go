package client

import (
	"context"

	"github.com/lancecat/lancecat/client/controlclient"
)

// The control plane's doors on namespaces and tables: undrop, protection, tasks and a
// maintenance pass on request. Their answers are the control plane's own types.

// Protection is whether an object is protected: a protected object cannot be dropped (nor its
// old versions cleaned up) until protection is turned off.
type Protection = controlclient.Protection

// Undropped is what an undrop restored: the id, and for a namespace the namespaces and tables
// rebuilt.
type Undropped = controlclient.UndropResponse

// Task is a table's long-running work (a maintenance pass, running or finished) or a dropped
// object's pending trash deadline.
type Task = controlclient.Task

// MaintenanceStep is a step of a maintenance pass.
type MaintenanceStep = controlclient.MaintenanceRunRequestSteps

// The maintenance steps; a pass runs them in this order whatever order they are asked in.
const (
	StepCompact         = controlclient.MaintenanceRunRequestStepsCompact
	StepOptimizeIndices = controlclient.MaintenanceRunRequestStepsOptimizeIndices
	StepCleanup         = controlclient.MaintenanceRunRequestStepsCleanup
)

// MaintenanceReport is what a maintenance pass did, one report per step asked for.
type MaintenanceReport = controlclient.MaintenanceRunReport

// UndropTable re-registers a recoverably dropped table at its old location.
func (c *Client) UndropTable(ctx context.Context, id []string) (*Undropped, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.UndropTableWithResponse(ctx, c.routeID(id), &controlclient.UndropTableParams{Delimiter: &c.delimiter})
	if err := check("undrop table", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// UndropNamespace rebuilds a cascade-dropped namespace and what it held.
func (c *Client) UndropNamespace(ctx context.Context, id []string) (*Undropped, error) {
	if err := c.checkID("namespace", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.UndropNamespaceWithResponse(ctx, c.routeID(id), &controlclient.UndropNamespaceParams{Delimiter: &c.delimiter})
	if err := check("undrop namespace", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// TableProtection is whether the table id is protected.
func (c *Client) TableProtection(ctx context.Context, id []string) (*Protection, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.DescribeTableProtectionWithResponse(Idempotent(ctx), c.routeID(id), &controlclient.DescribeTableProtectionParams{Delimiter: &c.delimiter})
	if err := check("describe table protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// SetTableProtection turns the table id's protection on or off.
func (c *Client) SetTableProtection(ctx context.Context, id []string, on bool) (*Protection, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.SetTableProtectionWithResponse(ctx, c.routeID(id), &controlclient.SetTableProtectionParams{Delimiter: &c.delimiter},
		controlclient.SetProtectionRequest{Protected: on})
	if err := check("set table protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// NamespaceProtection is whether the namespace id is protected.
func (c *Client) NamespaceProtection(ctx context.Context, id []string) (*Protection, error) {
	if err := c.checkID("namespace", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.DescribeNamespaceProtectionWithResponse(Idempotent(ctx), c.routeID(id), &controlclient.DescribeNamespaceProtectionParams{Delimiter: &c.delimiter})
	if err := check("describe namespace protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// SetNamespaceProtection turns the namespace id's protection on or off.
func (c *Client) SetNamespaceProtection(ctx context.Context, id []string, on bool) (*Protection, error) {
	if err := c.checkID("namespace", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.SetNamespaceProtectionWithResponse(ctx, c.routeID(id), &controlclient.SetNamespaceProtectionParams{Delimiter: &c.delimiter},
		controlclient.SetProtectionRequest{Protected: on})
	if err := check("set namespace protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// SetProjectProtection turns the project id's protection on or off.
func (c *Client) SetProjectProtection(ctx context.Context, id string, on bool) (*controlclient.Project, error) {
	resp, err := c.Control.SetProjectProtectionWithResponse(ctx, id, controlclient.SetProtectionRequest{Protected: on})
	if err := check("set project protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// SetWarehouseProtection turns the warehouse id's protection on or off.
func (c *Client) SetWarehouseProtection(ctx context.Context, id string, on bool) (*controlclient.Warehouse, error) {
	resp, err := c.Control.SetWarehouseProtectionWithResponse(ctx, id, controlclient.SetProtectionRequest{Protected: on})
	if err := check("set warehouse protection", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// TableTasks is the table id's tasks, newest first, then its pending trash deadline if it was
// dropped recoverably.
func (c *Client) TableTasks(ctx context.Context, id []string) ([]Task, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Control.ListTableTasksWithResponse(Idempotent(ctx), c.routeID(id), &controlclient.ListTableTasksParams{Delimiter: &c.delimiter})
	if err := check("list table tasks", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200.Tasks, nil
}

// NamespaceTasks is the tasks of every table under the namespace id, then the pending trash
// deadlines of ids under it.
func (c *Client) NamespaceTasks(ctx context.Context, id []string) ([]Task, error) {
	if err := c.checkID("namespace", id, 0); err != nil {
		return nil, err
	}
	resp, err := c.Control.ListNamespaceTasksWithResponse(Idempotent(ctx), c.routeID(id), &controlclient.ListNamespaceTasksParams{Delimiter: &c.delimiter})
	if err := check("list namespace tasks", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200.Tasks, nil
}

// Maintenance is a maintenance pass asked for: the steps (none: all three), a dry run, and a
// retention for this run replacing the policy's (0: the policy's).
type Maintenance struct {
	Steps            []MaintenanceStep
	DryRun           bool
	OlderThanSeconds int64
}

// RunTableMaintenance runs a maintenance pass on the table id now; the table's policy still
// decides which steps run. A step that fails stops the ones after it; the report says so.
func (c *Client) RunTableMaintenance(ctx context.Context, id []string, m Maintenance) (*MaintenanceReport, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	req := controlclient.MaintenanceRunRequest{}
	if len(m.Steps) > 0 {
		req.Steps = &m.Steps
	}
	if m.DryRun {
		req.DryRun = ptr(true)
	}
	if m.OlderThanSeconds > 0 {
		req.OlderThanSeconds = ptr(m.OlderThanSeconds)
	}
	resp, err := c.Control.RunTableMaintenanceWithResponse(ctx, c.routeID(id), &controlclient.RunTableMaintenanceParams{Delimiter: &c.delimiter}, req)
	if err := check("run table maintenance", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}
