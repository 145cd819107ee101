package catalogtest

// The Catalog contract over HTTP: a remote lancecat through the generated spec client
// (client.Client), so the conformance suite checks the whole path, wire included.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// HTTP is the catalog c talks to, as a Catalog. A table's Location is its URI (the wire carries
// no other form). A failed answer is the typed error of its spec code.
func HTTP(c *client.Client) catalog.Catalog { return &remote{c: c} }

type remote struct{ c *client.Client }

// wire is id as a route's {id} (the root: the delimiter alone).
func (r *remote) wire(id ident.ID) string {
	if len(id) == 0 {
		return r.c.Delimiter()
	}
	return r.c.ID(id...)
}

type withBody[P, R any] func(ctx context.Context, id nsclient.Id, params *P, contentType string, body io.Reader, reqEditors ...nsclient.RequestEditorFn) (R, error)

// post sends body as JSON to op and decodes the answer into out (nil: ignore it).
func post[P, R any](ctx context.Context, op withBody[P, R], id string, params *P, body, out any, editors ...nsclient.RequestEditorFn) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := op(ctx, id, params, "application/json", bytes.NewReader(b), editors...)
	return decode(resp, err, out)
}

// optionQuery is the request editor sending a lifecycle call's options as the doors read them:
// force=true and purge=true in the query (lancecat's parameters; the spec defines neither, so the
// generated params do not carry them).
func optionQuery(opts []catalog.Option) nsclient.RequestEditorFn {
	o := catalog.Resolve(opts...)
	return func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		if o.Force {
			q.Set("force", "true")
		}
		if o.Purge {
			q.Set("purge", "true")
		}
		req.URL.RawQuery = q.Encode()
		return nil
	}
}

// decode checks a generated response and decodes its body into out.
func decode(resp any, err error, out any) error {
	if err := client.Check(resp, err); err != nil {
		var p *client.Problem
		if errors.As(err, &p) {
			return nserr.Newf(nserr.Code(p.Code), "%s", p.Message)
		}
		return err
	}
	if out == nil {
		return nil
	}
	body := reflect.ValueOf(resp).Elem().FieldByName("Body").Bytes()
	return json.Unmarshal(body, out)
}

type propsAnswer struct {
	Properties map[string]string `json:"properties"`
}

func (r *remote) CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, opts ...catalog.Option) (map[string]string, error) {
	var out propsAnswer
	body := map[string]any{"properties": props}
	if mode != "" {
		body["mode"] = mode
	}
	err := post(ctx, r.c.Spec.CreateNamespaceWithBodyWithResponse, r.wire(id), nil, body, &out, optionQuery(opts))
	return out.Properties, err
}

func (r *remote) DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error) {
	var out propsAnswer
	err := post(ctx, r.c.Spec.DescribeNamespaceWithBodyWithResponse, r.wire(id), nil, map[string]any{}, &out)
	return out.Properties, err
}

func (r *remote) NamespaceExists(ctx context.Context, id ident.ID) error {
	return post(ctx, r.c.Spec.NamespaceExistsWithBodyWithResponse, r.wire(id), nil, map[string]any{}, nil)
}

func (r *remote) DropNamespace(ctx context.Context, id ident.ID, mode, behavior string, opts ...catalog.Option) (map[string]string, error) {
	var out propsAnswer
	body := map[string]any{}
	if mode != "" {
		body["mode"] = mode
	}
	if behavior != "" {
		body["behavior"] = behavior
	}
	err := post(ctx, r.c.Spec.DropNamespaceWithBodyWithResponse, r.wire(id), nil, body, &out, optionQuery(opts))
	return out.Properties, err
}

func page(names []string, token *string) catalog.Page {
	p := catalog.Page{Names: names}
	if p.Names == nil {
		p.Names = []string{}
	}
	if token != nil {
		p.NextToken = *token
	}
	return p
}

func listParams(token string, limit int) (*string, *int) {
	var t *string
	var l *int
	if token != "" {
		t = &token
	}
	if limit > 0 {
		l = &limit
	}
	return t, l
}

func (r *remote) ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	t, l := listParams(token, limit)
	resp, err := r.c.Spec.ListNamespacesWithResponse(ctx, r.wire(id), &nsclient.ListNamespacesParams{PageToken: t, Limit: l})
	var out nsclient.ListNamespacesResponse
	if err := decode(resp, err, &out); err != nil {
		return catalog.Page{}, err
	}
	return page(out.Namespaces, out.PageToken), nil
}

func (r *remote) ListTables(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	t, l := listParams(token, limit)
	resp, err := r.c.Spec.ListTablesWithResponse(ctx, r.wire(id), &nsclient.ListTablesParams{PageToken: t, Limit: l})
	var out nsclient.ListTablesResponse
	if err := decode(resp, err, &out); err != nil {
		return catalog.Page{}, err
	}
	return page(out.Tables, out.PageToken), nil
}

func (r *remote) ListAllTables(ctx context.Context, token string, limit int) (catalog.Page, error) {
	t, l := listParams(token, limit)
	resp, err := r.c.Spec.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{PageToken: t, Limit: l})
	var out nsclient.ListTablesResponse
	if err := decode(resp, err, &out); err != nil {
		return catalog.Page{}, err
	}
	return page(out.Tables, out.PageToken), nil
}

// tableAnswer is what the table lifecycle operations answer.
type tableAnswer struct {
	Location       string            `json:"location"`
	Properties     map[string]string `json:"properties"`
	StorageOptions map[string]string `json:"storage_options"`
	Version        *int64            `json:"version"`
	Managed        *bool             `json:"managed_versioning"`
}

func (a tableAnswer) table(id ident.ID) *catalog.Entry {
	t := &catalog.Entry{ID: slices.Clone(id), Location: a.Location, URI: a.Location, Properties: a.Properties,
		StorageOptions: a.StorageOptions, ManagedVersioning: a.Managed != nil && *a.Managed}
	if t.Properties == nil {
		t.Properties = map[string]string{}
	}
	return t
}

func (r *remote) DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*catalog.Entry, error) {
	var out tableAnswer
	body := map[string]any{"properties": props}
	if location != "" {
		body["location"] = location
	}
	if err := post(ctx, r.c.Spec.DeclareTableWithBodyWithResponse, r.wire(id), nil, body, &out); err != nil {
		return nil, err
	}
	return out.table(id), nil
}

func (r *remote) CreateTable(ctx context.Context, id ident.ID, nt catalog.NewTable, opts ...catalog.Option) (*catalog.Entry, uint64, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(nt.Schema))
	if nt.Rows != nil {
		rs, err := nt.Rows()
		if err != nil {
			return nil, 0, err
		}
		if r, ok := rs.(interface{ Release() }); ok {
			defer r.Release()
		}
		for rs.Next() {
			if err := w.Write(rs.RecordBatch()); err != nil {
				return nil, 0, err
			}
		}
		if err := rs.Err(); err != nil {
			return nil, 0, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, 0, err
	}
	params := &nsclient.CreateTableParams{}
	if nt.Mode != "" {
		params.Mode = &nt.Mode
	}
	if nt.Properties != nil {
		b, err := json.Marshal(nt.Properties)
		if err != nil {
			return nil, 0, err
		}
		params.Properties = ptr(string(b))
	}
	editor := func(_ context.Context, req *http.Request) error {
		if nt.Location != "" {
			req.Header.Set("x-lance-table-location", nt.Location)
		}
		return nil
	}
	resp, err := r.c.Spec.CreateTableWithBodyWithResponse(ctx, r.wire(id), params, "application/vnd.apache.arrow.stream", &buf, editor, optionQuery(opts))
	var out tableAnswer
	if err := decode(resp, err, &out); err != nil {
		return nil, 0, err
	}
	v := uint64(0)
	if out.Version != nil {
		v = uint64(*out.Version)
	}
	return out.table(id), v, nil
}

func (r *remote) describe(ctx context.Context, id ident.ID, req map[string]any) (*describeAnswer, error) {
	var out describeAnswer
	if err := post(ctx, r.c.Spec.DescribeTableWithBodyWithResponse, r.wire(id), nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

type describeAnswer struct {
	tableAnswer
	Schema *lance.JSONSchema `json:"schema"`
	Stats  *struct {
		NumDeletedRows int `json:"num_deleted_rows"`
		NumFragments   int `json:"num_fragments"`
	} `json:"stats"`
}

func (r *remote) DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error) {
	out, err := r.describe(ctx, id, map[string]any{})
	if err != nil {
		return nil, err
	}
	return out.table(id), nil
}

func (r *remote) TableExists(ctx context.Context, id ident.ID) error {
	return post(ctx, r.c.Spec.TableExistsWithBodyWithResponse, r.wire(id), nil, map[string]any{}, nil)
}

func (r *remote) DropTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	resp, err := r.c.Spec.DropTableWithResponse(ctx, r.wire(id), &nsclient.DropTableParams{}, optionQuery(opts))
	var out tableAnswer
	if err := decode(resp, err, &out); err != nil {
		return nil, err
	}
	return out.table(id), nil
}

func (r *remote) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...catalog.Option) (*catalog.Entry, error) {
	var out tableAnswer
	body := map[string]any{"location": location, "properties": props}
	if mode != "" {
		body["mode"] = mode
	}
	if err := post(ctx, r.c.Spec.RegisterTableWithBodyWithResponse, r.wire(id), nil, body, &out, optionQuery(opts)); err != nil {
		return nil, err
	}
	return out.table(id), nil
}

func (r *remote) DeregisterTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	var out tableAnswer
	if err := post(ctx, r.c.Spec.DeregisterTableWithBodyWithResponse, r.wire(id), nil, map[string]any{}, &out, optionQuery(opts)); err != nil {
		return nil, err
	}
	return out.table(id), nil
}

func (r *remote) RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string, opts ...catalog.Option) (*catalog.Entry, error) {
	body := map[string]any{"new_table_name": newName}
	if newNamespace != nil {
		body["new_namespace_id"] = []string(newNamespace)
	}
	if err := post(ctx, r.c.Spec.RenameTableWithBodyWithResponse, r.wire(id), nil, body, nil, optionQuery(opts)); err != nil {
		return nil, err
	}
	dest := newNamespace
	if dest == nil {
		dest = id.Parent()
	}
	return &catalog.Entry{ID: append(slices.Clone(dest), newName)}, nil
}

// LoadTable describes the table once; the handle's operations are the table routes.
func (r *remote) LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error) {
	out, err := r.describe(ctx, id, map[string]any{})
	if err != nil {
		return nil, err
	}
	return &remoteTable{r: r, id: slices.Clone(id), wire: r.wire(id), meta: out.table(id)}, nil
}

type remoteTable struct {
	r    *remote
	id   ident.ID
	wire string
	meta *catalog.Entry
}

func (t *remoteTable) Meta() *catalog.Entry { return t.meta }

// CommitPrepared: the files of a prepared commit are written into the table's storage by the
// process holding the handle, which a remote catalog's client does not reach.
func (t *remoteTable) CommitPrepared(context.Context, catalog.PreparedCommit) (*lance.Version, error) {
	return nil, nserr.Unsupportedf("a prepared commit's files are written beside the catalog: a remote catalog's handle cannot commit them")
}

func branchOf(body map[string]any, branch string) map[string]any {
	if branch != "" {
		body["branch"] = branch
	}
	return body
}

func (t *remoteTable) State(ctx context.Context, opts catalog.DescribeOptions) (*catalog.TableState, error) {
	req := branchOf(map[string]any{"load_detailed_metadata": opts.Detailed}, opts.Branch)
	if opts.Version != nil {
		req["version"] = *opts.Version
	}
	if opts.Tag != nil {
		req["tag"] = *opts.Tag
	}
	out, err := t.r.describe(ctx, t.id, req)
	if err != nil || out.Version == nil {
		return nil, err
	}
	st := &catalog.TableState{Version: uint64(*out.Version)}
	if out.Schema != nil {
		st.Schema = *out.Schema
	}
	if out.Stats != nil {
		st.Stats = &lance.TableStats{DeletedRows: uint64(out.Stats.NumDeletedRows), NumFragments: out.Stats.NumFragments}
	}
	return st, nil
}

func (t *remoteTable) Restore(ctx context.Context, branch string, version int64) (uint64, error) {
	if err := post(ctx, t.r.c.Spec.RestoreTableWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"version": version}, branch), nil); err != nil {
		return 0, err
	}
	v, err := t.DescribeVersion(ctx, branch, nil)
	return v.Version, err
}

func (t *remoteTable) Stats(ctx context.Context, branch string) (lance.TableStats, error) {
	var out nsclient.GetTableStatsResponse
	if err := post(ctx, t.r.c.Spec.GetTableStatsWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{}, branch), &out); err != nil {
		return lance.TableStats{}, err
	}
	return lance.TableStats{NumRows: uint64(out.NumRows), TotalBytes: uint64(out.TotalBytes), NumIndices: int(out.NumIndices),
		NumFragments: int(out.FragmentStats.NumFragments), NumSmallFragments: int(out.FragmentStats.NumSmallFragments)}, nil
}

func tableVersion(v nsclient.TableVersion) catalog.TableVersion {
	out := catalog.TableVersion{Version: uint64(v.Version), ManifestPath: v.ManifestPath}
	if v.ManifestSize != nil {
		out.ManifestSize = *v.ManifestSize
	}
	if v.ETag != nil {
		out.ETag = *v.ETag
	}
	if v.Metadata != nil {
		out.Metadata = *v.Metadata
	}
	return out
}

func (t *remoteTable) ListVersions(ctx context.Context, q catalog.VersionQuery) ([]catalog.TableVersion, string, error) {
	tok, l := listParams(q.Token, q.Limit)
	p := &nsclient.ListTableVersionsParams{PageToken: tok, Limit: l, Descending: &q.Descending}
	if q.Branch != "" {
		p.Branch = &q.Branch
	}
	resp, err := t.r.c.Spec.ListTableVersionsWithResponse(ctx, t.wire, p)
	var out nsclient.ListTableVersionsResponse
	if err := decode(resp, err, &out); err != nil {
		return nil, "", err
	}
	vs := make([]catalog.TableVersion, len(out.Versions))
	for i, v := range out.Versions {
		vs[i] = tableVersion(v)
	}
	next := ""
	if out.PageToken != nil {
		next = *out.PageToken
	}
	return vs, next, nil
}

func (t *remoteTable) DescribeVersion(ctx context.Context, branch string, version *int64) (catalog.TableVersion, error) {
	body := branchOf(map[string]any{}, branch)
	if version != nil {
		body["version"] = *version
	}
	var out nsclient.DescribeTableVersionResponse
	if err := post(ctx, t.r.c.Spec.DescribeTableVersionWithBodyWithResponse, t.wire, nil, body, &out); err != nil {
		return catalog.TableVersion{}, err
	}
	return tableVersion(out.Version), nil
}

func (t *remoteTable) CreateVersion(ctx context.Context, nv catalog.NewTableVersion) (catalog.TableVersion, error) {
	body := branchOf(map[string]any{"version": nv.Version, "manifest_path": nv.ManifestPath}, nv.Branch)
	if nv.ManifestSize != nil {
		body["manifest_size"] = *nv.ManifestSize
	}
	if nv.NamingScheme != "" {
		body["naming_scheme"] = nv.NamingScheme
	}
	if nv.Metadata != nil {
		body["metadata"] = nv.Metadata
	}
	var out nsclient.CreateTableVersionResponse
	if err := post(ctx, t.r.c.Spec.CreateTableVersionWithBodyWithResponse, t.wire, nil, body, &out); err != nil {
		return catalog.TableVersion{}, err
	}
	if out.Version == nil {
		return catalog.TableVersion{}, nil
	}
	return tableVersion(*out.Version), nil
}

func (t *remoteTable) DeleteVersions(ctx context.Context, branch string, ranges []lance.VersionRange) (int, error) {
	rs := make([]nsclient.VersionRange, len(ranges))
	for i, r := range ranges {
		rs[i] = nsclient.VersionRange{StartVersion: int64(r.Start), EndVersion: r.End}
	}
	var out nsclient.BatchDeleteTableVersionsResponse
	if err := post(ctx, t.r.c.Spec.BatchDeleteTableVersionsWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"ranges": rs}, branch), &out); err != nil {
		return 0, err
	}
	if out.DeletedCount == nil {
		return 0, nil
	}
	return int(*out.DeletedCount), nil
}

func (t *remoteTable) ListTags(ctx context.Context, token string, limit int) ([]lance.Tag, string, error) {
	tok, l := listParams(token, limit)
	resp, err := t.r.c.Spec.ListTableTagsWithResponse(ctx, t.wire, &nsclient.ListTableTagsParams{PageToken: tok, Limit: l})
	var out nsclient.ListTableTagsResponse
	if err := decode(resp, err, &out); err != nil {
		return nil, "", err
	}
	var tags []lance.Tag
	for name, c := range out.Tags {
		tags = append(tags, lance.Tag{Name: name, Branch: c.Branch, Version: uint64(c.Version), ManifestSize: c.ManifestSize})
	}
	slices.SortFunc(tags, func(a, b lance.Tag) int { return strings.Compare(a.Name, b.Name) })
	next := ""
	if out.PageToken != nil {
		next = *out.PageToken
	}
	return tags, next, nil
}

func (t *remoteTable) GetTag(ctx context.Context, name string) (lance.Tag, error) {
	var out nsclient.GetTableTagVersionResponse
	if err := post(ctx, t.r.c.Spec.GetTableTagVersionWithBodyWithResponse, t.wire, nil, map[string]any{"tag": name}, &out); err != nil {
		return lance.Tag{}, err
	}
	return lance.Tag{Name: name, Branch: out.Branch, Version: uint64(out.Version)}, nil
}

func (t *remoteTable) CreateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	body := branchOf(map[string]any{"tag": name, "version": version}, branch)
	if err := post(ctx, t.r.c.Spec.CreateTableTagWithBodyWithResponse, t.wire, nil, body, nil); err != nil {
		return lance.Tag{}, err
	}
	return lance.Tag{Name: name, Version: uint64(version)}, nil
}

func (t *remoteTable) UpdateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	body := branchOf(map[string]any{"tag": name, "version": version}, branch)
	if err := post(ctx, t.r.c.Spec.UpdateTableTagWithBodyWithResponse, t.wire, nil, body, nil); err != nil {
		return lance.Tag{}, err
	}
	return lance.Tag{Name: name, Version: uint64(version)}, nil
}

func (t *remoteTable) DeleteTag(ctx context.Context, name string) error {
	return post(ctx, t.r.c.Spec.DeleteTableTagWithBodyWithResponse, t.wire, nil, map[string]any{"tag": name}, nil)
}

func (t *remoteTable) UpdateSchemaMetadata(ctx context.Context, branch string, updates lance.MetadataUpdate) (map[string]string, error) {
	p := &nsclient.UpdateTableSchemaMetadataParams{}
	if branch != "" {
		p.Branch = &branch
	}
	out := map[string]string{}
	if updates == nil {
		updates = lance.MetadataUpdate{}
	}
	err := post(ctx, t.r.c.Spec.UpdateTableSchemaMetadataWithBodyWithResponse, t.wire, p, updates, &out)
	return out, err
}

func (t *remoteTable) UpdateFieldMetadata(ctx context.Context, branch string, updates []catalog.FieldMetadataUpdate) (uint64, map[string]map[string]string, error) {
	ups := make([]map[string]any, len(updates))
	for i, u := range updates {
		md := u.Metadata
		if md == nil {
			md = lance.MetadataUpdate{}
		}
		ups[i] = map[string]any{"path": u.Path, "metadata": md, "replace": u.Replace}
	}
	var out nsclient.UpdateFieldMetadataResponse
	if err := post(ctx, t.r.c.Spec.UpdateFieldMetadataWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"updates": ups}, branch), &out); err != nil {
		return 0, nil, err
	}
	var fields map[string]map[string]string
	if out.Fields != nil {
		fields = *out.Fields
	}
	return uint64(out.Version), fields, nil
}

func (t *remoteTable) DropColumns(ctx context.Context, branch string, paths []string) (uint64, error) {
	var out nsclient.AlterTableDropColumnsResponse
	if paths == nil {
		paths = []string{}
	}
	err := post(ctx, t.r.c.Spec.AlterTableDropColumnsWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"columns": paths}, branch), &out)
	return uint64(out.Version), err
}

// Dataset answers Unsupported: a remote catalog's dataset is not in this process's storage.
func (t *remoteTable) Dataset() (*lance.Dataset, error) {
	return nil, nserr.Unsupportedf("table %s is served by a remote catalog: its dataset is not in this server's storage", strings.Join(t.id, "."))
}

// KnownLatest is unknown: the remote handle lists nothing on load.
func (t *remoteTable) KnownLatest() (lance.ManifestLocation, bool) {
	return lance.ManifestLocation{}, false
}
