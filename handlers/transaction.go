package handlers

// The transaction operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// DescribeTransaction is POST /v1/transaction/{id}/describe.
func (s *Server) DescribeTransaction(c echo.Context, _ nsapi.Id, params nsapi.DescribeTransactionParams) error {
	var req nsapi.DescribeTransactionRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DescribeTransaction")
}

// AlterTransaction is POST /v1/transaction/{id}/alter.
func (s *Server) AlterTransaction(c echo.Context, _ nsapi.Id, params nsapi.AlterTransactionParams) error {
	var req nsapi.AlterTransactionRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "AlterTransaction")
}
