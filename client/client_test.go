package client_test

// These tests use small HTTP servers of their own to inject faults a real catalog does not make on
// demand (503s, cut connections, cut streams, token expiry). What the helpers do against the real
// server is tested in the server's module (app/client_integration_test.go).

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
)

func jsonAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func problem(w http.ResponseWriter, status int, code client.Code) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "code": int(code), "error": "because " + code.String()})
}

// TestOptionsReachTheWire: credentials, headers, the user agent and the delimiter are on every
// request; a delimiter the caller gives explicitly wins.
func TestOptionsReachTheWire(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		jsonAnswer(w, 200, `{"tables":["t"]}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL+"/", client.WithAPIKey("k1"), client.WithBearerToken("t1"), client.WithDelimiter("."),
		client.WithHeaders(map[string]string{"X-Team": "search", "x-api-key": "loses"}), client.WithUserAgent("svc/1.0"))
	assert.NilError(t, err)
	assert.Equal(t, c.ID("a", "b"), "a.b")
	tables, err := c.ListTables(context.Background(), []string{"a", "b"})
	assert.NilError(t, err)
	assert.DeepEqual(t, tables, []string{"t"})
	assert.Equal(t, got.Header.Get("x-api-key"), "k1")
	assert.Equal(t, got.Header.Get("Authorization"), "Bearer t1")
	assert.Equal(t, got.Header.Get("X-Team"), "search")
	assert.Equal(t, got.Header.Get("User-Agent"), "svc/1.0")
	assert.Equal(t, got.URL.Query().Get("delimiter"), ".")
	assert.Equal(t, got.URL.EscapedPath(), "/v1/namespace/a.b/table/list")

	own := "$"
	resp, err := c.Spec.ListTablesWithResponse(context.Background(), "a$b", &nsclient.ListTablesParams{Delimiter: &own})
	assert.NilError(t, client.Check(resp, err))
	assert.Equal(t, got.URL.Query().Get("delimiter"), "$")

	// The root namespace travels as the delimiter itself.
	root, err := client.New(srv.URL)
	assert.NilError(t, err)
	_, err = root.ListTables(context.Background(), nil)
	assert.NilError(t, err)
	assert.Equal(t, got.URL.EscapedPath(), "/v1/namespace/$/table/list")

	// An id part holding the delimiter would name another object: refused before sending.
	_, err = c.ListTables(context.Background(), []string{"a.b"})
	assert.Assert(t, errors.Is(err, client.ErrInvalidInput), "%v", err)
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  string
		opts []client.Option
	}{
		{"no scheme", "catalog:2333", nil},
		{"ftp", "ftp://catalog", nil},
		{"empty delimiter", "http://c", []client.Option{client.WithDelimiter("")}},
		{"negative retries", "http://c", []client.Option{client.WithRetries(-1, 0)}},
		{"tls over a foreign transport", "http://c", []client.Option{client.WithTransport(roundTripFunc(nil)), client.WithTLSConfig(&tls.Config{})}},
		{"client credentials without a token URL", "http://c", []client.Option{client.WithClientCredentials(clientcredentials.Config{ClientID: "x"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.New(tc.url, tc.opts...)
			assert.Assert(t, err != nil)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWithTransportAndHTTPClient: a caller's transport carries the requests (with the client's
// layers on top), and a caller's http.Client lends its timeout.
func TestWithTransportAndHTTPClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/namespace/slow/exists" {
			time.Sleep(300 * time.Millisecond)
		}
		jsonAnswer(w, 200, `{}`)
	}))
	defer srv.Close()
	var seen atomic.Int32
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen.Add(1)
		assert.Check(t, is.Equal(r.Header.Get("x-api-key"), "k"))
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := client.New(srv.URL, client.WithTransport(rt), client.WithAPIKey("k"))
	assert.NilError(t, err)
	ok, err := c.NamespaceExists(context.Background(), []string{"a"})
	assert.NilError(t, err)
	assert.Assert(t, ok)
	assert.Equal(t, seen.Load(), int32(1))

	// An empty key sends none.
	c, err = client.New(srv.URL, client.WithTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, sent := r.Header["X-Api-Key"]
		assert.Check(t, !sent)
		return http.DefaultTransport.RoundTrip(r)
	})), client.WithAPIKey(""), client.WithBearerToken(""))
	assert.NilError(t, err)
	_, err = c.NamespaceExists(context.Background(), []string{"a"})
	assert.NilError(t, err)

	c, err = client.New(srv.URL, client.WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond}))
	assert.NilError(t, err)
	_, err = c.NamespaceExists(context.Background(), []string{"slow"})
	var ne net.Error
	assert.Assert(t, errors.As(err, &ne) && ne.Timeout(), "%v", err)
}

// TestWithTLSConfig: a catalog behind a private CA is reached with that CA, and refused without.
func TestWithTLSConfig(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { jsonAnswer(w, 200, `{}`) }))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	c, err := client.New(srv.URL, client.WithTLSConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig))
	assert.NilError(t, err)
	_, err = c.NamespaceExists(context.Background(), []string{"a"})
	assert.NilError(t, err)

	// Without the CA: a certificate error, not retried.
	c, err = client.New(srv.URL, client.WithRetries(3, time.Millisecond))
	assert.NilError(t, err)
	_, err = c.NamespaceExists(context.Background(), []string{"a"})
	var unknown x509.UnknownAuthorityError
	assert.Assert(t, errors.As(err, &unknown), "%v", err)
}

// TestOAuth2: client credentials are exchanged once for a token that is reused while it is valid
// and replaced when it expires; a plain token source is asked again only after expiry.
func TestOAuth2(t *testing.T) {
	var issued atomic.Int32
	var lifetime atomic.Int64
	lifetime.Store(3600)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, r.ParseForm())
		assert.Check(t, is.Equal(r.PostForm.Get("grant_type"), "client_credentials"))
		id, secret, _ := r.BasicAuth()
		assert.Check(t, is.Equal(id+":"+secret, "svc:s3cret"))
		n := issued.Add(1)
		jsonAnswer(w, 200, fmt.Sprintf(`{"access_token":"tok%d","token_type":"Bearer","expires_in":%d}`, n, lifetime.Load()))
	}))
	defer tokens.Close()
	var auths []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		jsonAnswer(w, 200, `{}`)
	}))
	defer srv.Close()

	c, err := client.New(srv.URL, client.WithClientCredentials(clientcredentials.Config{
		ClientID: "svc", ClientSecret: "s3cret", TokenURL: tokens.URL, AuthStyle: oauth2.AuthStyleInHeader}))
	assert.NilError(t, err)
	ctx := context.Background()
	for range 3 {
		_, err := c.NamespaceExists(ctx, []string{"a"})
		assert.NilError(t, err)
	}
	assert.Equal(t, issued.Load(), int32(1))
	assert.DeepEqual(t, auths, []string{"Bearer tok1", "Bearer tok1", "Bearer tok1"})

	// Tokens that expire at once (inside oauth2's 10s margin) are fetched for every request.
	lifetime.Store(1)
	c, err = client.New(srv.URL, client.WithClientCredentials(clientcredentials.Config{
		ClientID: "svc", ClientSecret: "s3cret", TokenURL: tokens.URL, AuthStyle: oauth2.AuthStyleInHeader}))
	assert.NilError(t, err)
	auths = nil
	for range 2 {
		_, err := c.NamespaceExists(ctx, []string{"a"})
		assert.NilError(t, err)
	}
	assert.DeepEqual(t, auths, []string{"Bearer tok2", "Bearer tok3"})

	// A token source that fails: the request is not sent.
	auths = nil
	c, err = client.New(srv.URL, client.WithOAuth2(failingSource{}), client.WithRetries(2, time.Millisecond))
	assert.NilError(t, err)
	_, err = c.NamespaceExists(ctx, []string{"a"})
	assert.ErrorContains(t, err, "obtaining an OAuth2 token")
	assert.Equal(t, len(auths), 0)
}

type failingSource struct{}

func (failingSource) Token() (*oauth2.Token, error) { return nil, errors.New("no token today") }

// TestEveryCodeHasItsSentinel: errors.Is finds each code's sentinel through the helpers' wrapping,
// and the *Problem keeps status, code and message.
func TestEveryCodeHasItsSentinel(t *testing.T) {
	var code atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem(w, 409, client.Code(code.Load()))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	assert.NilError(t, err)
	codes := client.Codes()
	assert.Equal(t, len(codes), 24)
	for i, want := range codes {
		assert.Equal(t, int(want), i)
		code.Store(int32(want))
		_, err := c.DescribeTable(context.Background(), []string{"ns", "t"})
		assert.Assert(t, errors.Is(err, want.Err()), "%s: %v", want, err)
		for _, other := range codes {
			if other != want {
				assert.Assert(t, !errors.Is(err, other.Err()), "%s matches %s", want, other)
			}
		}
		var p *client.Problem
		assert.Assert(t, errors.As(err, &p))
		assert.Equal(t, p.Status, 409)
		assert.Equal(t, p.Code, want)
		assert.Equal(t, p.Message, "because "+want.String())
	}
	assert.Equal(t, client.CodeTableNotFound.String(), "TableNotFound")
	assert.Assert(t, errors.Is(client.CodeTableNotFound.Err(), client.ErrTableNotFound))
}

// TestAnswerWithoutProblemBody: a proxy's page still gives its status and the code it means.
func TestAnswerWithoutProblemBody(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   error
	}{
		{502, client.ErrInternal},
		{503, client.ErrServiceUnavailable},
		{429, client.ErrThrottling},
		{401, client.ErrUnauthenticated},
		{403, client.ErrPermissionDenied},
		{400, client.ErrInvalidInput},
	} {
		err := client.CheckHTTP(&http.Response{StatusCode: tc.status}, []byte("<html>gateway</html>"))
		assert.Assert(t, errors.Is(err, tc.want), "%d: %v", tc.status, err)
		var p *client.Problem
		assert.Assert(t, errors.As(err, &p))
		assert.Equal(t, p.Status, tc.status)
		assert.Equal(t, p.Message, "<html>gateway</html>")
	}
}

// TestRetries: what is sent again, how often, and what is not.
func TestRetries(t *testing.T) {
	type step func(w http.ResponseWriter, r *http.Request)
	refuse := func(status int) step {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			code := client.CodeServiceUnavailable
			if status == 429 {
				code = client.CodeThrottling
			}
			problem(w, status, code)
		}
	}
	ok := func(w http.ResponseWriter, r *http.Request) { jsonAnswer(w, 200, `{"tables":[]}`) }
	fail := func(w http.ResponseWriter, r *http.Request) { problem(w, 500, client.CodeInternal) }
	committed := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(503)
		_, _ = io.WriteString(w, `{"status":503,"code":17,"context":{"committed":"true"}}`)
	}
	cut := func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		assert.Check(t, err)
		conn.Close() // the request arrived; the answer never comes
	}
	for _, tc := range []struct {
		name    string
		retries int
		steps   []step
		call    func(c *client.Client) error
		sent    int
		wantErr error
	}{
		{"503 then ok", 3, []step{refuse(503), ok}, listTables, 2, nil},
		{"429 twice then ok", 3, []step{refuse(429), refuse(429), ok}, listTables, 3, nil},
		{"503 past the budget", 2, []step{refuse(503), refuse(503), refuse(503), ok}, listTables, 3, client.ErrServiceUnavailable},
		{"no retries configured", 0, []step{refuse(503), ok}, listTables, 1, client.ErrServiceUnavailable},
		{"500 is not retried", 3, []step{fail, ok}, listTables, 1, client.ErrInternal},
		{"an answer that committed is not retried", 3, []step{committed, ok}, listTables, 1, client.ErrServiceUnavailable},
		{"a cut answer to a read is retried", 3, []step{cut, ok}, listTables, 2, nil},
		{"a cut answer to a write is not", 3, []step{cut, ok}, dropTable, 1, io.ErrUnexpectedEOF},
		{"a write refused with 503 is retried, body and all", 3, []step{refuse(503), ok}, createNamespace, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int32
			var bodies []string
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				n := int(sent.Add(1)) - 1
				tc.steps[min(n, len(tc.steps)-1)](w, r)
			}))
			defer srv.Close()
			c, err := client.New(srv.URL, client.WithRetries(tc.retries, time.Millisecond))
			assert.NilError(t, err)
			err = tc.call(c)
			if tc.wantErr == nil {
				assert.NilError(t, err)
			} else {
				assert.Assert(t, err != nil)
				if !errors.Is(err, tc.wantErr) {
					assert.ErrorContains(t, err, "EOF")
				}
			}
			assert.Equal(t, int(sent.Load()), tc.sent)
			for _, b := range bodies[1:] {
				assert.Equal(t, b, bodies[0], "a retry sent another body")
			}
		})
	}
}

func listTables(c *client.Client) error {
	_, err := c.ListTables(context.Background(), []string{"ns"})
	return err
}

func dropTable(c *client.Client) error { return c.DropTable(context.Background(), []string{"ns", "t"}) }

func createNamespace(c *client.Client) error {
	return c.CreateNamespace(context.Background(), []string{"ns"}, map[string]string{"team": "search"})
}

// TestRetryConnectionRefused: a catalog not listening yet is tried again (nothing was sent),
// whatever the method; the context bounds the waiting.
func TestRetryConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	l.Close()
	c, err := client.New("http://"+addr, client.WithRetries(50, 20*time.Millisecond))
	assert.NilError(t, err)

	// Start listening after a while: the retries reach it.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(100 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listen again: %v", err)
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { jsonAnswer(w, 200, `{}`) })}
		go srv.Serve(l) //nolint:errcheck
		t.Cleanup(func() { srv.Close() })
	}()
	assert.NilError(t, c.DropTable(context.Background(), []string{"ns", "t"}))
	<-done

	// Nothing listening at all: the context's deadline ends the retries.
	l, err = net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	dead := l.Addr().String()
	l.Close()
	c, err = client.New("http://"+dead, client.WithRetries(1000, 5*time.Millisecond))
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = c.DropTable(ctx, []string{"ns", "t"})
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Assert(t, time.Since(start) < 2*time.Second)
}

// TestRetryAfter: the wait the server asks for is honoured.
func TestRetryAfter(t *testing.T) {
	var first time.Time
	var gap time.Duration
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sent.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			problem(w, 429, client.CodeThrottling)
			return
		}
		gap = time.Since(first)
		jsonAnswer(w, 200, `{"tables":[]}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithRetries(1, time.Millisecond))
	assert.NilError(t, err)
	assert.NilError(t, listTables(c))
	assert.Assert(t, gap >= 900*time.Millisecond, "retried after %s", gap)
}

var schema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String}}, nil)

// rows is a reader of n rows (ids from start) in batches of batch rows.
func rows(t *testing.T, start, n, batch int) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for off := 0; off < n; off += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := off; i < min(off+batch, n); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(start + i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d with some padding to make it longer", start+i))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rr, err := array.NewRecordReader(schema, recs)
	assert.NilError(t, err)
	return rr
}

// answerInserted answers an insert of the Arrow IPC stream b at version: as many rows inserted
// as b holds.
func answerInserted(t *testing.T, w http.ResponseWriter, version int64, b []byte) {
	rr, err := ipc.NewReader(bytes.NewReader(b))
	assert.Check(t, err)
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	assert.Check(t, rr.Err())
	jsonAnswer(w, 200, fmt.Sprintf(`{"version":%d,"num_inserted_rows":%d}`, version, n))
}

// TestStreamedWriteRetried: a streamed Insert refused with 503 is sent again whole (the bytes
// read so far were kept); one larger than RetryBufferSize is sent once and its refusal answered.
func TestStreamedWriteRetried(t *testing.T) {
	var bodies [][]byte
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, is.Equal(r.Header.Get("Content-Type"), "application/vnd.apache.arrow.stream"))
		b, err := io.ReadAll(r.Body)
		assert.Check(t, err)
		bodies = append(bodies, b)
		if sent.Add(1) == 1 {
			problem(w, 503, client.CodeServiceUnavailable)
			return
		}
		answerInserted(t, w, 2, b)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithRetries(2, time.Millisecond))
	assert.NilError(t, err)

	res, err := c.Insert(context.Background(), []string{"ns", "t"}, rows(t, 0, 5000, 700), client.Append)
	assert.NilError(t, err)
	assert.Equal(t, res.Inserted, int64(5000))
	assert.Equal(t, res.Version, int64(2))
	assert.Equal(t, len(bodies), 2)
	assert.Assert(t, bytes.Equal(bodies[0], bodies[1]))

	// Refused before the body was read (a rate limiter in front): the replay still sends it whole.
	bodies = nil
	sent.Store(0)
	early := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sent.Add(1) == 1 {
			w.Header().Set("Connection", "close")
			problem(w, 429, client.CodeThrottling)
			return
		}
		b, err := io.ReadAll(r.Body)
		assert.Check(t, err)
		answerInserted(t, w, 3, b)
	}))
	defer early.Close()
	ec, err := client.New(early.URL, client.WithRetries(2, time.Millisecond))
	assert.NilError(t, err)
	res, err = ec.Insert(context.Background(), []string{"ns", "t"}, rows(t, 0, 30000, 1000), client.Append)
	assert.NilError(t, err)
	assert.Equal(t, res.Inserted, int64(30000))
	assert.Equal(t, sent.Load(), int32(2))

	// Over the buffer: sent once, the refusal is the answer.
	bodies = nil
	sent.Store(0)
	big := rows(t, 0, 200_000, 20_000) // ~11 MB of IPC
	_, err = c.Insert(context.Background(), []string{"ns", "t"}, big, client.Append)
	assert.Assert(t, errors.Is(err, client.ErrServiceUnavailable), "%v", err)
	assert.Equal(t, len(bodies), 1)
	assert.Assert(t, len(bodies[0]) > client.RetryBufferSize, "%d bytes", len(bodies[0]))
}

// TestInsertReaderError: a reader that fails mid-way fails the Insert; the server sees a broken
// stream, never a complete one.
func TestInsertReaderError(t *testing.T) {
	var complete atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr, err := ipc.NewReader(r.Body)
		if err == nil {
			for rr.Next() {
			}
			complete.Store(rr.Err() == nil)
		}
		jsonAnswer(w, 200, `{}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	assert.NilError(t, err)
	_, err = c.Insert(context.Background(), []string{"ns", "t"}, &failingReader{RecordReader: rows(t, 0, 100, 10)}, "")
	assert.ErrorContains(t, err, "the source broke")
	assert.Assert(t, !complete.Load())
}

type failingReader struct {
	array.RecordReader
	n int
}

func (f *failingReader) Next() bool {
	f.n++
	return f.n < 4 && f.RecordReader.Next()
}

func (f *failingReader) Err() error { return errors.New("the source broke") }

// TestQueryStreams: Query hands out the first batch while the server has not finished sending;
// a result cut short is an error, never a shorter result.
func TestQueryStreams(t *testing.T) {
	release := make(chan struct{})
	var mode atomic.Value
	mode.Store("whole")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.apache.arrow.file")
		var buf bytes.Buffer
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		assert.Check(t, err)
		rr := rows(t, 0, 30, 10)
		firstEnd := 0 // the writer writes each batch as it comes: where the first ends
		for rr.Next() {
			assert.Check(t, fw.Write(rr.RecordBatch()))
			if firstEnd == 0 {
				firstEnd = buf.Len()
			}
		}
		assert.Check(t, fw.Close())
		file := buf.Bytes()
		switch mode.Load() {
		case "whole":
			_, _ = w.Write(file)
		case "slow":
			// The opening, the schema and the first batch; the rest once the client read that batch.
			_, _ = w.Write(file[:firstEnd])
			w.(http.Flusher).Flush()
			<-release
			_, _ = w.Write(file[firstEnd:])
		case "cut":
			_, _ = w.Write(file[:firstEnd]) // stops at a message boundary
		case "no footer":
			_, _ = w.Write(file[:len(file)-20])
		}
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	assert.NilError(t, err)
	ctx := context.Background()
	q := nsclient.QueryTableRequest{K: 100}

	count := func(rr array.RecordReader) (int64, error) {
		defer rr.Release()
		var n int64
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		return n, rr.Err()
	}
	rr, err := c.Query(ctx, []string{"ns", "t"}, q)
	assert.NilError(t, err)
	n, err := count(rr)
	assert.NilError(t, err)
	assert.Equal(t, n, int64(30))

	mode.Store("slow")
	rr, err = c.Query(ctx, []string{"ns", "t"}, q)
	assert.NilError(t, err)
	assert.Assert(t, rr.Next(), "%v", rr.Err())
	assert.Equal(t, rr.RecordBatch().NumRows(), int64(10)) // before the server sent the rest
	close(release)
	var rest int64
	for rr.Next() {
		rest += rr.RecordBatch().NumRows()
	}
	assert.NilError(t, rr.Err())
	assert.Equal(t, rest, int64(20))
	rr.Release()

	for _, m := range []string{"cut", "no footer"} {
		mode.Store(m)
		rr, err = c.Query(ctx, []string{"ns", "t"}, q)
		assert.NilError(t, err)
		_, err = count(rr)
		assert.ErrorContains(t, err, "cut short", m)
	}
}

// TestQueryError: a refused query is the Problem, not a broken stream.
func TestQueryError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem(w, 404, client.CodeTableNotFound)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	assert.NilError(t, err)
	_, err = c.Query(context.Background(), []string{"ns", "t"}, nsclient.QueryTableRequest{K: 1})
	assert.Assert(t, errors.Is(err, client.ErrTableNotFound), "%v", err)
	assert.Assert(t, strings.HasPrefix(err.Error(), "query: "))
}
