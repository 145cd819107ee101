package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
)

// Media types of the spec's non-JSON forms.
const (
	ArrowStreamType = "application/vnd.apache.arrow.stream"
	ArrowFileType   = "application/vnd.apache.arrow.file"
)

// writeJSON answers 200 with v as JSON. A nil v still answers `{}`: the Lance clients parse every
// success body, and an empty 200 fails them with "EOF".
func writeJSON(c echo.Context, v any) error {
	if v == nil {
		return c.JSONBlob(http.StatusOK, []byte("{}"))
	}
	return c.JSON(http.StatusOK, v)
}

// writeCount answers count_rows: a plain integer, not a JSON object.
func writeCount(c echo.Context, n int64) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte(strconv.FormatInt(n, 10)))
}

// writeText answers explain_plan and analyze_plan: a JSON string (the spec's schema, and what
// the remote clients parse).
func writeText(c echo.Context, s string) error {
	return c.JSON(http.StatusOK, s)
}

// writeArrowFile streams a query result as an Arrow IPC file (uncompressed, content-type
// application/vnd.apache.arrow.file: every remote client version reads that). The first batch is
// read before the status is sent, so a query that fails at once still answers its error; a failure
// later cuts the stream short, which the client sees as a broken file, never as a complete answer.
// A query matching nothing is still a file with the schema.
func writeArrowFile(c echo.Context, rr array.RecordReader) error {
	first := rr.Next()
	if err := rr.Err(); err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, ArrowFileType)
	res.WriteHeader(http.StatusOK)
	w, err := ipc.NewFileWriter(res, ipc.WithSchema(rr.Schema()))
	if err != nil {
		return err
	}
	for ok := first; ok; ok = rr.Next() {
		if err := w.Write(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	return w.Close()
}

// writeExists answers the exists operations: existence is the status, 200 with `{}` (some clients
// parse every 2xx body) or the not-found error of the object kind.
func writeExists(c echo.Context, err error) error {
	if err != nil {
		return err
	}
	return writeJSON(c, nil)
}

// bodyReadError reports a body that could not be read; a body over the limit is a 413.
func bodyReadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nserr.Transport(http.StatusRequestEntityTooLarge, nserr.InvalidInput,
			fmt.Sprintf("request body exceeds the limit of %d bytes", tooLarge.Limit))
	}
	return nserr.InvalidInputf("reading the request body: %v", err)
}
