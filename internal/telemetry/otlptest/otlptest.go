// Package otlptest is an OTLP trace receiver for tests: an HTTP one (POST /v1/traces,
// http/protobuf, gzip or not) and a gRPC one (TraceService/Export), each decoding the
// ExportTraceServiceRequests that arrive into spans a test can look at, as a collector would.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one span received, flattened.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Kind                      tracepb.Span_SpanKind
	Attrs                     map[string]string
	Status                    tracepb.Status_StatusCode
	StatusMessage             string
	Scope                     string
	Resource                  map[string]string
	Start                     time.Time
	Duration                  time.Duration
}

// Receiver collects the spans exported to it.
type Receiver struct {
	// Endpoint is what OTEL_EXPORTER_OTLP_ENDPOINT names (http://127.0.0.1:port).
	Endpoint string
	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
}

// NewHTTP serves POST /v1/traces (OTLP/HTTP, binary protobuf) until the test ends.
func NewHTTP(t testing.TB) *Receiver {
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg collectorpb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg, req.Header.Clone())
		out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.Endpoint = srv.URL
	return r
}

type grpcService struct {
	collectorpb.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcService) Export(_ context.Context, msg *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	g.r.add(msg, nil)
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// NewGRPC serves the OTLP TraceService over plaintext gRPC until the test ends.
func NewGRPC(t testing.TB) *Receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{Endpoint: "http://" + ln.Addr().String()}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, grpcService{r: r})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

func (r *Receiver) add(msg *collectorpb.ExportTraceServiceRequest, h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if h != nil {
		r.headers = append(r.headers, h)
	}
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: s.GetKind(),
					Attrs: attrs(s.GetAttributes()), Status: s.GetStatus().GetCode(), StatusMessage: s.GetStatus().GetMessage(),
					Scope: ss.GetScope().GetName(), Resource: res,
					Start:    time.Unix(0, int64(s.GetStartTimeUnixNano())),
					Duration: time.Duration(s.GetEndTimeUnixNano() - s.GetStartTimeUnixNano()),
				})
			}
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Requests is how many export requests arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Find is the spans named name.
func Find(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Children are the spans whose parent is s, in the order they started.
func Children(spans []Span, s Span) []Span {
	var out []Span
	for _, c := range spans {
		if c.ParentID == s.SpanID && c.TraceID == s.TraceID {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Tree draws s and everything under it, one span a line, indented by depth, with the attributes
// named in show when a span has them; repeated siblings of one name are folded into "×n".
func Tree(spans []Span, s Span, show ...string) string {
	var b strings.Builder
	var walk func(s Span, depth int, n int)
	walk = func(s Span, depth int, n int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), s.Name)
		if n > 1 {
			fmt.Fprintf(&b, " ×%d", n)
		}
		for _, k := range show {
			if v, ok := s.Attrs[k]; ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		if s.Status == tracepb.Status_STATUS_CODE_ERROR {
			fmt.Fprintf(&b, " [error: %s]", s.StatusMessage)
		}
		b.WriteByte('\n')
		kids := Children(spans, s)
		for i := 0; i < len(kids); {
			j := i + 1
			for j < len(kids) && kids[j].Name == kids[i].Name && len(Children(spans, kids[j])) == 0 && len(Children(spans, kids[i])) == 0 {
				j++
			}
			walk(kids[i], depth+1, j-i)
			i = j
		}
	}
	walk(s, 0, 1)
	return b.String()
}

// Wait polls until ok holds for the spans received, or fails the test after d.
func (r *Receiver) Wait(t testing.TB, d time.Duration, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		spans := r.Spans()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("otlptest: spans not as expected after %s; %d received", d, len(spans))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
