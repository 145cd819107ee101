package catalogtest

// The batch and transaction doors over HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// versionBody is a create_table_version body (with the table's id, as batch entries carry it).
func versionBody(e catalog.VersionEntry) map[string]any {
	body := branchOf(map[string]any{"id": []string(e.Table), "version": e.Version, "manifest_path": e.ManifestPath}, e.Branch)
	if e.ManifestSize != nil {
		body["manifest_size"] = *e.ManifestSize
	}
	if e.NamingScheme != "" {
		body["naming_scheme"] = e.NamingScheme
	}
	if e.Metadata != nil {
		body["metadata"] = e.Metadata
	}
	return body
}

// txnID reads a transaction_id the server answered.
func (r *remote) txnID(s *string) ident.ID {
	if s == nil || *s == "" {
		return nil
	}
	return ident.ID(strings.Split(*s, r.c.Delimiter()))
}

// bodyPost sends body to a door without {id}.
func bodyPost[P, R any](ctx context.Context, op func(context.Context, *P, string, *bytes.Reader) (R, error), body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := op(ctx, nil, "application/json", bytes.NewReader(b))
	return decode(resp, err, out)
}

func (r *remote) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	switch kind {
	case catalog.TxnCreateTableVersion:
		if len(entries) != 1 {
			return catalog.Transaction{}, nil, nserr.InvalidInputf("create_table_version takes one entry")
		}
		var out nsclient.CreateTableVersionResponse
		if err := post(ctx, r.c.Spec.CreateTableVersionWithBodyWithResponse, r.wire(entries[0].Table), nil, versionBody(entries[0]), &out); err != nil {
			return catalog.Transaction{}, nil, err
		}
		var v catalog.TableVersion
		if out.Version != nil {
			v = tableVersion(*out.Version)
		}
		v.TransactionID = r.txnID(out.TransactionId)
		return catalog.Transaction{ID: v.TransactionID, Status: catalog.TxnSucceeded}, []catalog.TableVersion{v}, nil
	case catalog.TxnBatchCreateTableVersions:
		es := make([]map[string]any, len(entries))
		for i, e := range entries {
			es[i] = versionBody(e)
		}
		var out nsclient.BatchCreateTableVersionsResponse
		op := func(ctx context.Context, p *nsclient.BatchCreateTableVersionsParams, ct string, b *bytes.Reader) (*nsclient.BatchCreateTableVersionsResponse3, error) {
			return r.c.Spec.BatchCreateTableVersionsWithBodyWithResponse(ctx, p, ct, b)
		}
		if err := bodyPost(ctx, op, map[string]any{"entries": es}, &out); err != nil {
			return catalog.Transaction{}, nil, err
		}
		id := r.txnID(out.TransactionId)
		vs := make([]catalog.TableVersion, len(out.Versions))
		for i, v := range out.Versions {
			vs[i] = tableVersion(v)
			vs[i].TransactionID = id
		}
		return catalog.Transaction{ID: id, Status: catalog.TxnSucceeded}, vs, nil
	default:
		ops := make([]map[string]any, len(entries))
		for i, e := range entries {
			switch {
			case e.Declare != nil:
				d := map[string]any{"id": []string(e.Table)}
				if e.Declare.Location != "" {
					d["location"] = e.Declare.Location
				}
				if e.Declare.Properties != nil {
					d["properties"] = e.Declare.Properties
				}
				ops[i] = map[string]any{"declare_table": d}
				continue
			case e.Deregister:
				ops[i] = map[string]any{"deregister_table": map[string]any{"id": []string(e.Table)}}
				continue
			}
			if e.Delete != nil {
				ranges := make([]map[string]any, len(e.Delete.Ranges))
				for j, r := range e.Delete.Ranges {
					ranges[j] = map[string]any{"start_version": r.Start, "end_version": r.End}
				}
				ops[i] = map[string]any{"delete_table_versions": branchOf(map[string]any{"id": []string(e.Table), "ranges": ranges}, e.Delete.Branch)}
				continue
			}
			ops[i] = map[string]any{"create_table_version": versionBody(e)}
		}
		var out nsclient.BatchCommitTablesResponse
		op := func(ctx context.Context, p *nsclient.BatchCommitTablesParams, ct string, b *bytes.Reader) (*nsclient.BatchCommitTablesResponse3, error) {
			return r.c.Spec.BatchCommitTablesWithBodyWithResponse(ctx, p, ct, b, optionQuery(opts)) // force reaches its deregister entries
		}
		if err := bodyPost(ctx, op, map[string]any{"operations": ops}, &out); err != nil {
			return catalog.Transaction{}, nil, err
		}
		id := r.txnID(out.TransactionId)
		vs := make([]catalog.TableVersion, len(out.Results))
		for i, res := range out.Results {
			if res.CreateTableVersion != nil && res.CreateTableVersion.Version != nil {
				vs[i] = tableVersion(*res.CreateTableVersion.Version)
			}
			if res.DeleteTableVersions != nil && res.DeleteTableVersions.DeletedCount != nil {
				vs[i].Deleted = int(*res.DeleteTableVersions.DeletedCount)
			}
			if d := res.DeclareTable; d != nil {
				vs[i].Table = &catalog.Entry{ID: entries[i].Table, URI: deref(d.Location), Properties: derefMap(d.Properties), ManagedVersioning: d.ManagedVersioning != nil && *d.ManagedVersioning}
			}
			if d := res.DeregisterTable; d != nil {
				vs[i].Table = &catalog.Entry{ID: entries[i].Table, URI: deref(d.Location), Properties: derefMap(d.Properties)}
			}
			vs[i].TransactionID = id
		}
		return catalog.Transaction{ID: id, Status: catalog.TxnSucceeded}, vs, nil
	}
}

type txnAnswer struct {
	Status     string            `json:"status"`
	Properties map[string]string `json:"properties"`
}

func (a txnAnswer) txn(id ident.ID) catalog.Transaction {
	return catalog.Transaction{ID: id, Status: a.Status, Properties: a.Properties}
}

func (r *remote) DescribeTransaction(ctx context.Context, id ident.ID) (catalog.Transaction, error) {
	var out txnAnswer
	if err := post(ctx, r.c.Spec.DescribeTransactionWithBodyWithResponse, r.wire(id), nil, map[string]any{}, &out); err != nil {
		return catalog.Transaction{}, err
	}
	return out.txn(id), nil
}

func (r *remote) AlterTransaction(ctx context.Context, id ident.ID, actions []catalog.TransactionAction) (catalog.Transaction, error) {
	as := make([]map[string]any, len(actions))
	for i, a := range actions {
		m := map[string]any{}
		if a.SetStatus != nil {
			m["setStatusAction"] = map[string]any{"status": *a.SetStatus}
		}
		if a.Set != nil {
			s := map[string]any{"key": a.Set.Key, "value": a.Set.Value}
			if a.Set.Mode != "" {
				s["mode"] = a.Set.Mode
			}
			m["setPropertyAction"] = s
		}
		if a.Unset != nil {
			u := map[string]any{"key": a.Unset.Key}
			if a.Unset.Mode != "" {
				u["mode"] = a.Unset.Mode
			}
			m["unsetPropertyAction"] = u
		}
		as[i] = m
	}
	var out txnAnswer
	if err := post(ctx, r.c.Spec.AlterTransactionWithBodyWithResponse, r.wire(id), nil, map[string]any{"actions": as}, &out); err != nil {
		return catalog.Transaction{}, err
	}
	return out.txn(id), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefMap(m *map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return *m
}
