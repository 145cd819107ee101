package catalogtest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// The index operations of the remote table (H-index), over the index routes. The drop route has
// no body, so it drops on the main branch.

func (t *remoteTable) CreateIndex(ctx context.Context, req catalog.CreateIndexRequest) (uint64, error) {
	body := branchOf(map[string]any{"column": req.Column, "index_type": req.IndexType}, req.Branch)
	if req.Name != "" {
		body["name"] = req.Name
	}
	return 0, post(ctx, t.r.c.Spec.CreateTableIndexWithBodyWithResponse, t.wire, nil, body, nil)
}

func (t *remoteTable) ListIndices(ctx context.Context, branch string, version *int64) ([]catalog.IndexDescription, error) {
	body := branchOf(map[string]any{}, branch)
	if version != nil {
		body["version"] = *version
	}
	var out nsclient.ListTableIndicesResponse
	if err := post(ctx, t.r.c.Spec.ListTableIndicesWithBodyWithResponse, t.wire, nil, body, &out); err != nil {
		return nil, err
	}
	list := make([]catalog.IndexDescription, len(out.Indexes))
	for i, ix := range out.Indexes {
		d := catalog.IndexDescription{Name: ix.IndexName, UUID: ix.IndexUuid, Columns: ix.Columns, CreatedAt: ix.CreatedAt}
		if ix.IndexType != nil {
			d.Type = *ix.IndexType
			d.IndexStats.Type = *ix.IndexType
		}
		if ix.TypeUrl != nil {
			d.TypeURL = *ix.TypeUrl
		}
		if ix.NumIndexedRows != nil {
			d.NumIndexedRows = uint64(*ix.NumIndexedRows)
		}
		if ix.NumUnindexedRows != nil {
			d.NumUnindexedRows = uint64(*ix.NumUnindexedRows)
		}
		if ix.NumSegments != nil {
			d.Segments = int(*ix.NumSegments)
			d.NumIndices = int(*ix.NumSegments)
		}
		if ix.IndexVersion != nil {
			d.IndexVersion = *ix.IndexVersion
		}
		if ix.SizeBytes != nil {
			d.SizeBytes = *ix.SizeBytes
		}
		list[i] = d
	}
	return list, nil
}

func (t *remoteTable) IndexStats(ctx context.Context, branch string, version *int64, name string) (lance.IndexStats, error) {
	body := branchOf(map[string]any{}, branch)
	if version != nil {
		body["version"] = *version
	}
	b, err := json.Marshal(body)
	if err != nil {
		return lance.IndexStats{}, err
	}
	resp, err := t.r.c.Spec.DescribeTableIndexStatsWithBodyWithResponse(ctx, t.wire, name, nil, "application/json", bytes.NewReader(b))
	var out nsclient.DescribeTableIndexStatsResponse
	if err := decode(resp, err, &out); err != nil {
		return lance.IndexStats{}, err
	}
	var st lance.IndexStats
	if out.IndexType != nil {
		st.Type = *out.IndexType
	}
	if out.NumIndexedRows != nil {
		st.NumIndexedRows = uint64(*out.NumIndexedRows)
	}
	if out.NumUnindexedRows != nil {
		st.NumUnindexedRows = uint64(*out.NumUnindexedRows)
	}
	if out.NumIndices != nil {
		st.NumIndices = int(*out.NumIndices)
	}
	if out.DistanceType != nil {
		st.DistanceType = *out.DistanceType
	}
	return st, nil
}

func (t *remoteTable) DropIndex(ctx context.Context, _ string, name string) (uint64, error) {
	resp, err := t.r.c.Spec.DropTableIndexWithResponse(ctx, t.wire, name, nil)
	return 0, decode(resp, err, nil)
}

// testIndices: scalar indices are created (default name <column>_idx), listed with upper-case
// types, described, dropped; a missing index is TableIndexNotFound, a missing column
// TableColumnNotFound, a vector index on a non-vector column InvalidInput, an unbuilt vector
// kind Unsupported; an older version lists what it had.
func testIndices(t *testing.T, s *suite, ns ident.ID) {
	id := child(ns, "t")
	s.create(t, id, "a", "b")
	h := s.load(t, id)
	_, err := h.CreateIndex(s.ctx, catalog.CreateIndexRequest{Column: "a", IndexType: "BTREE", Replace: true})
	assert.NilError(t, err)
	_, err = h.CreateIndex(s.ctx, catalog.CreateIndexRequest{Column: "b", IndexType: "bitmap", Name: "b_bm", Replace: true})
	assert.NilError(t, err)
	_, err = h.CreateIndex(s.ctx, catalog.CreateIndexRequest{Column: "nope", IndexType: "BTREE", Replace: true})
	code(t, err, nserr.TableColumnNotFound)
	// A vector index on a column that is not a vector is the caller's mistake; a vector kind
	// lancecat does not build (IVF_RQ) is Unsupported. Neither commits anything.
	_, err = h.CreateIndex(s.ctx, catalog.CreateIndexRequest{Column: "a", IndexType: "IVF_PQ", Replace: true})
	code(t, err, nserr.InvalidInput)
	_, err = h.CreateIndex(s.ctx, catalog.CreateIndexRequest{Column: "a", IndexType: "IVF_RQ", Replace: true})
	code(t, err, nserr.Unsupported)

	h = s.load(t, id)
	list, err := h.ListIndices(s.ctx, "", nil)
	assert.NilError(t, err)
	var got []string
	for _, d := range list {
		got = append(got, d.Name+":"+d.Type+":"+strings.Join(d.Columns, ","))
	}
	assert.DeepEqual(t, got, []string{"a_idx:BTREE:a", "b_bm:BITMAP:b"})
	st, err := h.IndexStats(s.ctx, "", nil, "a_idx")
	assert.NilError(t, err)
	assert.DeepEqual(t, st, lance.IndexStats{Type: "BTREE", NumIndices: 1})
	_, err = h.IndexStats(s.ctx, "", nil, "nope")
	code(t, err, nserr.TableIndexNotFound)

	_, err = h.DropIndex(s.ctx, "", "b_bm")
	assert.NilError(t, err)
	_, err = h.DropIndex(s.ctx, "", "b_bm")
	code(t, err, nserr.TableIndexNotFound)
	h = s.load(t, id)
	list, err = h.ListIndices(s.ctx, "", nil)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 1)
	v1 := int64(1)
	list, err = h.ListIndices(s.ctx, "", &v1)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 0, "version 1 had no index")
}
