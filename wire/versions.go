package wire

// The version bodies (create_table_version, delete_table_versions) and the batch doors' entries
// (batch_create_table_versions, batch_commit_tables) as the catalog takes them. The batch doors'
// tables are named in the body: each id is validated here (the guard chain parsed none), and
// authorized per entry by the catalog (catalog/governed).

import (
	"fmt"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// NewTableVersion is a create_table_version body: a manifest the client staged.
func NewTableVersion(req nsapi.CreateTableVersionRequest) catalog.NewTableVersion {
	nv := catalog.NewTableVersion{Version: req.Version, ManifestPath: req.ManifestPath, ManifestSize: req.ManifestSize}
	if req.NamingScheme != nil {
		nv.NamingScheme = *req.NamingScheme
	}
	if req.Branch != nil {
		nv.Branch = *req.Branch
	}
	if req.Metadata != nil {
		nv.Metadata = *req.Metadata
	}
	return nv
}

// VersionRanges are the ranges of a delete_table_versions body ([start, end); end < 0: through
// the latest). where names the body in errors ("": the door's own).
func VersionRanges(where string, ranges []nsapi.VersionRange) ([]lance.VersionRange, error) {
	if where != "" {
		where += "."
	}
	out := make([]lance.VersionRange, len(ranges))
	for i, r := range ranges {
		if r.StartVersion < 0 {
			return nil, nserr.InvalidInputf("%sranges[%d].start_version %d is negative", where, i, r.StartVersion)
		}
		out[i] = lance.VersionRange{Start: uint64(r.StartVersion), End: r.EndVersion}
	}
	return out, nil
}

// BatchCreateEntries are the entries of a batch_create_table_versions body, ids spelled with
// delimiter checked: at least one.
func BatchCreateEntries(req nsapi.BatchCreateTableVersionsRequest, delimiter string) ([]catalog.VersionEntry, error) {
	if len(req.Entries) == 0 {
		return nil, nserr.InvalidInputf("entries must name at least one table version")
	}
	entries := make([]catalog.VersionEntry, len(req.Entries))
	for i, e := range req.Entries {
		var err error
		entries[i], err = versionEntry(fmt.Sprintf("entries[%d]", i), delimiter, e.Id, nsapi.CreateTableVersionRequest{
			Version: e.Version, ManifestPath: e.ManifestPath, ManifestSize: e.ManifestSize,
			NamingScheme: e.NamingScheme, Branch: e.Branch, Metadata: e.Metadata,
		})
		if err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// BatchCommitEntries are the operations of a batch_commit_tables body, one entry each: at least
// one, each setting exactly one of create_table_version, declare_table, delete_table_versions,
// deregister_table.
func BatchCommitEntries(req nsapi.BatchCommitTablesRequest, delimiter string) ([]catalog.VersionEntry, error) {
	if len(req.Operations) == 0 {
		return nil, nserr.InvalidInputf("operations must name at least one operation")
	}
	entries := make([]catalog.VersionEntry, len(req.Operations))
	for i, op := range req.Operations {
		where := fmt.Sprintf("operations[%d]", i)
		kinds := 0
		for _, set := range []bool{op.CreateTableVersion != nil, op.DeclareTable != nil, op.DeleteTableVersions != nil, op.DeregisterTable != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, nserr.InvalidInputf("%s must set exactly one of create_table_version, declare_table, delete_table_versions, deregister_table", where)
		}
		var err error
		switch {
		case op.DeclareTable != nil:
			d := op.DeclareTable
			if entries[i], err = tableEntry(where+".declare_table", delimiter, d.Id); err != nil {
				return nil, err
			}
			decl := &catalog.TableDeclaration{}
			if d.Location != nil {
				decl.Location = *d.Location
			}
			if d.Properties != nil {
				decl.Properties = *d.Properties
			}
			entries[i].Declare = decl
		case op.DeregisterTable != nil:
			if entries[i], err = tableEntry(where+".deregister_table", delimiter, op.DeregisterTable.Id); err != nil {
				return nil, err
			}
			entries[i].Deregister = true
		case op.DeleteTableVersions != nil:
			if entries[i], err = deletionEntry(where+".delete_table_versions", delimiter, *op.DeleteTableVersions); err != nil {
				return nil, err
			}
		default:
			var id []string
			if op.CreateTableVersion.Id != nil {
				id = *op.CreateTableVersion.Id
			}
			if entries[i], err = versionEntry(where+".create_table_version", delimiter, id, *op.CreateTableVersion); err != nil {
				return nil, err
			}
		}
	}
	return entries, nil
}

// versionEntry is a create_table_version body of a batch.
func versionEntry(where, delimiter string, id []string, req nsapi.CreateTableVersionRequest) (catalog.VersionEntry, error) {
	e, err := tableEntry(where, delimiter, &id)
	if err != nil {
		return catalog.VersionEntry{}, err
	}
	e.NewTableVersion = NewTableVersion(req)
	return e, nil
}

// deletionEntry is a delete_table_versions body of a batch.
func deletionEntry(where, delimiter string, req nsapi.BatchDeleteTableVersionsRequest) (catalog.VersionEntry, error) {
	e, err := tableEntry(where, delimiter, req.Id)
	if err != nil {
		return catalog.VersionEntry{}, err
	}
	ranges, err := VersionRanges(where, req.Ranges)
	if err != nil {
		return catalog.VersionEntry{}, err
	}
	e.Delete = &catalog.VersionDeletion{Ranges: ranges}
	if req.Branch != nil {
		e.Delete.Branch = *req.Branch
	}
	return e, nil
}

// tableEntry is the entry of the table an entry of a batch names (required, valid under
// delimiter).
func tableEntry(where, delimiter string, id *[]string) (catalog.VersionEntry, error) {
	var tid ident.ID
	if id != nil {
		tid = ident.ID(*id)
	}
	if len(tid) == 0 {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id is required", where)
	}
	if err := tid.Validate(delimiter); err != nil {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id: %v", where, err)
	}
	return catalog.VersionEntry{Table: tid}, nil
}
