package handlers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

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

// writeText answers explain_plan and analyze_plan: a plain string.
func writeText(c echo.Context, s string) error {
	return c.String(http.StatusOK, s)
}

// writeArrowFile streams a query result as an Arrow IPC file.
func writeArrowFile(c echo.Context, write func(io.Writer) error) error {
	c.Response().Header().Set(echo.HeaderContentType, ArrowFileType)
	c.Response().WriteHeader(http.StatusOK)
	return write(c.Response())
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
