package handlers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"
)

// held is a body the server's middleware read in full (server.heldBody's shape).
type held struct {
	*bytes.Reader
	b []byte
}

func (h *held) Close() error  { return nil }
func (h *held) Bytes() []byte { return h.b }

// TestReadBody: a body the middleware holds is handed over as it is (no second copy of a
// 100 MB Arrow body), a second read finds it consumed as io.ReadAll would have left it, and a
// plain body is read whole, with or without a declared length.
func TestReadBody(t *testing.T) {
	payload := []byte("arrow bytes")
	cases := []struct {
		name     string
		body     io.Reader
		length   int64
		sameData bool // the very buffer the middleware holds
	}{
		{"held by the middleware", &held{Reader: bytes.NewReader(payload), b: payload}, int64(len(payload)), true},
		{"declared length", bytes.NewReader(payload), int64(len(payload)), false},
		{"chunked", io.MultiReader(bytes.NewReader(payload)), -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", tc.body)
			if h, ok := tc.body.(*held); ok {
				req.Body = h
			}
			req.ContentLength = tc.length
			c := echo.New().NewContext(req, httptest.NewRecorder())
			got, err := readBody(c)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, payload)
			if tc.sameData {
				assert.Assert(t, &got[0] == &payload[0], "the held body was copied")
			}
			again, err := readBody(c)
			assert.NilError(t, err)
			assert.Equal(t, len(again), 0)
		})
	}

	// A declared length the body does not reach is a truncated body: 400, not a short read.
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(payload))
	req.ContentLength = int64(len(payload) + 5)
	_, err := readBody(echo.New().NewContext(req, httptest.NewRecorder()))
	assert.ErrorContains(t, err, "reading the request body")
}
