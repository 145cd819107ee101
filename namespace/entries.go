package namespace

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
)

// The table lifecycle as catalog.Catalog declares it: each answers the contract's entry of what
// the root's own method (tables.go, create.go) did. The options (catalog.Option: force, purge)
// are ignored here and in namespaces.go and batch.go: the directory namespace keeps no protection
// and no trash, so there is nothing to force and a drop always destroys.

// CreateTable creates table id holding nt's rows (see createTable).
func (n *Namespace) CreateTable(ctx context.Context, id ident.ID, nt catalog.NewTable, _ ...catalog.Option) (*catalog.Entry, uint64, error) {
	t, v, err := n.createTable(ctx, id, nt)
	return t.public(), v, err
}

// DeclareTable declares table id at location without writing a version (see declareTable).
func (n *Namespace) DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*catalog.Entry, error) {
	t, err := n.declareTable(ctx, id, location, props)
	return t.public(), err
}

// DescribeTable finds table id (see describeTable).
func (n *Namespace) DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error) {
	t, err := n.describeTable(ctx, id)
	return t.public(), err
}

// DropTable removes table id and deletes its directory (see dropTable).
func (n *Namespace) DropTable(ctx context.Context, id ident.ID, _ ...catalog.Option) (*catalog.Entry, error) {
	t, err := n.dropTable(ctx, id)
	return t.public(), err
}

// DeregisterTable removes table id's entry and leaves its bytes (see deregisterTable).
func (n *Namespace) DeregisterTable(ctx context.Context, id ident.ID, _ ...catalog.Option) (*catalog.Entry, error) {
	t, err := n.deregisterTable(ctx, id)
	return t.public(), err
}

// RegisterTable adds the existing dataset at location as table id (see registerTable).
func (n *Namespace) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, _ ...catalog.Option) (*catalog.Entry, error) {
	t, err := n.registerTable(ctx, id, location, mode, props)
	return t.public(), err
}

// RenameTable renames table id (see renameTable).
func (n *Namespace) RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string, _ ...catalog.Option) (*catalog.Entry, error) {
	t, err := n.renameTable(ctx, id, newNamespace, newName)
	return t.public(), err
}

// public is the contract's entry of t (nil for nil).
func (t *entry) public() *catalog.Entry {
	if t == nil {
		return nil
	}
	return t.Entry
}
