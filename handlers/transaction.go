package handlers

// The transaction operations: the transactions the version commits make (namespace/batch.go,
// namespace/transactions.go). The guard chain has checked the door on the transaction's
// namespace (its id's parent).

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// DescribeTransaction is POST /v1/transaction/{id}/describe.
func (s *Server) DescribeTransaction(c echo.Context, _ nsapi.Id, params nsapi.DescribeTransactionParams) error {
	id, err := s.decodeRequest(c, params.Delimiter, &nsapi.DescribeTransactionRequest{})
	if err = s.backed(c, "DescribeTransaction", err); err != nil {
		return err
	}
	txn, err := s.catalog.DescribeTransaction(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DescribeTransactionResponse{Status: txn.Status, Properties: &txn.Properties})
}

// AlterTransaction is POST /v1/transaction/{id}/alter: every action or none.
func (s *Server) AlterTransaction(c echo.Context, _ nsapi.Id, params nsapi.AlterTransactionParams) error {
	var req nsapi.AlterTransactionRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "AlterTransaction", err); err != nil {
		return err
	}
	actions := make([]catalog.TransactionAction, len(req.Actions))
	for i, a := range req.Actions {
		switch {
		case a.SetStatusAction != nil:
			st := ""
			if a.SetStatusAction.Status != nil {
				st = *a.SetStatusAction.Status
			}
			actions[i].SetStatus = &st
		case a.SetPropertyAction != nil:
			actions[i].Set = &catalog.PropertySet{Key: strOf(a.SetPropertyAction.Key), Value: strOf(a.SetPropertyAction.Value), Mode: strOf(a.SetPropertyAction.Mode)}
		case a.UnsetPropertyAction != nil:
			actions[i].Unset = &catalog.PropertyUnset{Key: strOf(a.UnsetPropertyAction.Key), Mode: strOf(a.UnsetPropertyAction.Mode)}
		}
		set := 0
		for _, b := range []bool{a.SetStatusAction != nil, a.SetPropertyAction != nil, a.UnsetPropertyAction != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			return nserr.InvalidInputf("actions[%d] must set exactly one of setStatusAction, setPropertyAction, unsetPropertyAction", i)
		}
	}
	txn, err := s.catalog.AlterTransaction(c.Request().Context(), id, actions)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.AlterTransactionResponse{Status: txn.Status, Properties: &txn.Properties})
}
