package handlers

// The transaction operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// DescribeTransaction is POST /v1/transaction/{id}/describe.
func (s *Server) DescribeTransaction(c echo.Context, _ nsapi.Id, params nsapi.DescribeTransactionParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.DescribeTransactionRequest{})
	return unbacked(c, "DescribeTransaction", err)
}

// AlterTransaction is POST /v1/transaction/{id}/alter.
func (s *Server) AlterTransaction(c echo.Context, _ nsapi.Id, params nsapi.AlterTransactionParams) error {
	_, err := s.decodeRequest(c, params.Delimiter, &nsapi.AlterTransactionRequest{})
	return unbacked(c, "AlterTransaction", err)
}
