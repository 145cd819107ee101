package handlers

// The table version operations (the external manifest store), restore and stats.

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/wire"
)

func tableVersion(v catalog.TableVersion) nsapi.TableVersion {
	out := nsapi.TableVersion{Version: int64(v.Version), ManifestPath: v.ManifestPath, ManifestSize: ptr(v.ManifestSize)}
	if v.ETag != "" {
		out.ETag = ptr(v.ETag)
	}
	if !v.Timestamp.IsZero() {
		out.TimestampMillis = ptr(v.Timestamp.UnixMilli())
	}
	if len(v.Metadata) > 0 {
		out.Metadata = ptr(v.Metadata)
	}
	return out
}

// listedVersion is a version as ListTableVersions answers it: the spec's fields, plus the
// RFC 3339 `timestamp` and an always-present `metadata` a LanceDB 0.31 remote-mode client
// requires (newer ones read timestamp_millis).
type listedVersion struct {
	nsapi.TableVersion
	Timestamp string            `json:"timestamp,omitempty"`
	Metadata  map[string]string `json:"metadata"`
}

type listedVersions struct {
	Versions  []listedVersion `json:"versions"`
	PageToken *string         `json:"page_token,omitempty"`
}

// ListTableVersions is POST /v1/table/{id}/version/list.
func (s *Server) ListTableVersions(c echo.Context, _ nsapi.Id, params nsapi.ListTableVersionsParams) error {
	t, err := s.tableRequest(c, "ListTableVersions", params.Delimiter, &idOnlyRequest{})
	if err != nil {
		return err
	}
	q := catalog.VersionQuery{
		Branch: strOf(params.Branch), Descending: params.Descending != nil && *params.Descending,
		Limit: limitOf(params.Limit), Token: tokenOf(params.PageToken),
	}
	if q.Limit < 0 {
		return nserr.InvalidInputf("limit %d is negative", q.Limit)
	}
	versions, next, err := t.ListVersions(c.Request().Context(), q)
	if err != nil {
		return err
	}
	resp := listedVersions{Versions: make([]listedVersion, len(versions)), PageToken: pageToken(next)}
	for i, v := range versions {
		resp.Versions[i] = listedVersion{TableVersion: tableVersion(v), Metadata: v.Metadata}
		if resp.Versions[i].Metadata == nil {
			resp.Versions[i].Metadata = map[string]string{}
		}
		if !v.Timestamp.IsZero() {
			resp.Versions[i].Timestamp = v.Timestamp.UTC().Format(time.RFC3339Nano)
		}
	}
	return writeJSON(c, resp)
}

// CreateTableVersion is POST /v1/table/{id}/version/create.
func (s *Server) CreateTableVersion(c echo.Context, _ nsapi.Id, params nsapi.CreateTableVersionParams) error {
	var req nsapi.CreateTableVersionRequest
	t, err := s.tableRequest(c, "CreateTableVersion", params.Delimiter, &req)
	if err != nil {
		return err
	}
	v, err := t.CreateVersion(c.Request().Context(), wire.NewTableVersion(req))
	if err != nil {
		return err
	}
	resp := nsapi.CreateTableVersionResponse{Version: ptr(tableVersion(v))}
	if v.TransactionID != nil {
		resp.TransactionId = ptr(v.TransactionID.Join(s.delimiter))
	}
	return writeJSON(c, resp)
}

// DescribeTableVersion is POST /v1/table/{id}/version/describe.
func (s *Server) DescribeTableVersion(c echo.Context, _ nsapi.Id, params nsapi.DescribeTableVersionParams) error {
	var req nsapi.DescribeTableVersionRequest
	t, err := s.tableRequest(c, "DescribeTableVersion", params.Delimiter, &req)
	if err != nil {
		return err
	}
	v, err := t.DescribeVersion(c.Request().Context(), strOf(req.Branch), req.Version)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DescribeTableVersionResponse{Version: tableVersion(v)})
}

// BatchDeleteTableVersions is POST /v1/table/{id}/version/delete.
func (s *Server) BatchDeleteTableVersions(c echo.Context, _ nsapi.Id, params nsapi.BatchDeleteTableVersionsParams) error {
	var req nsapi.BatchDeleteTableVersionsRequest
	t, err := s.tableRequest(c, "BatchDeleteTableVersions", params.Delimiter, &req)
	if err != nil {
		return err
	}
	ranges, err := wire.VersionRanges("", req.Ranges)
	if err != nil {
		return err
	}
	n, err := t.DeleteVersions(c.Request().Context(), strOf(req.Branch), ranges)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.BatchDeleteTableVersionsResponse{DeletedCount: ptr(int64(n))})
}

// RestoreTable is POST /v1/table/{id}/restore.
func (s *Server) RestoreTable(c echo.Context, _ nsapi.Id, params nsapi.RestoreTableParams) error {
	var req nsapi.RestoreTableRequest
	t, err := s.tableRequest(c, "RestoreTable", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if _, err := t.Restore(c.Request().Context(), strOf(req.Branch), req.Version); err != nil {
		return err
	}
	return writeJSON(c, nsapi.RestoreTableResponse{})
}

// GetTableStats is POST /v1/table/{id}/stats.
func (s *Server) GetTableStats(c echo.Context, _ nsapi.Id, params nsapi.GetTableStatsParams) error {
	var req nsapi.GetTableStatsRequest
	t, err := s.tableRequest(c, "GetTableStats", params.Delimiter, &req)
	if err != nil {
		return err
	}
	st, err := t.Stats(c.Request().Context(), strOf(req.Branch))
	if err != nil {
		return err
	}
	l := st.Lengths
	return writeJSON(c, nsapi.GetTableStatsResponse{
		NumRows: int64(st.NumRows), TotalBytes: int64(st.TotalBytes), NumIndices: int64(st.NumIndices),
		FragmentStats: nsapi.FragmentStats{
			NumFragments: int64(st.NumFragments), NumSmallFragments: int64(st.NumSmallFragments),
			Lengths: nsapi.FragmentSummary{
				Min: int64(l.Min), Max: int64(l.Max), Mean: int64(l.Mean),
				P25: int64(l.P25), P50: int64(l.P50), P75: int64(l.P75), P99: int64(l.P99),
			},
		},
	})
}
