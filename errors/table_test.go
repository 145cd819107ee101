package errors_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz/authzerr"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/registry"
)

// TestSentinelTable walks every row of the one translation table: each sentinel, bare or wrapped
// with context, answers its code and that code's status, and nserr.Is sees it as the code's
// sentinel; no sentinel is listed twice (the table would then depend on its order).
func TestSentinelTable(t *testing.T) {
	rows := nserr.Sentinels()
	assert.Assert(t, len(rows) > 0)
	seen := map[error]bool{}
	for _, row := range rows {
		t.Run(row.Err.Error(), func(t *testing.T) {
			assert.Assert(t, !seen[row.Err], "listed twice")
			seen[row.Err] = true
			assert.Assert(t, row.Code.Valid(), "%d", row.Code)

			assert.Equal(t, nserr.CodeOf(row.Err), row.Code)
			wrapped := fmt.Errorf("%w: some context", row.Err)
			outer := fmt.Errorf("layer: %w", wrapped)
			assert.Equal(t, nserr.CodeOf(outer), row.Code)
			assert.Assert(t, nserr.Coded(outer))
			assert.Assert(t, nserr.Is(outer, nserr.Newf(row.Code, "")), "a code sentinel matches its sentinels")

			p := nserr.ProblemFor(outer, "/v1/x", "")
			assert.Equal(t, p.Code, int(row.Code))
			assert.Equal(t, p.Status, row.Code.HTTPStatus())
			if p.Status < 500 {
				// The client reads the message that wraps the sentinel, not the log context.
				assert.Equal(t, p.Detail, wrapped.Error())
			}
		})
	}
}

// TestSentinelsOfTheLayersAreDecided: every exported sentinel of lance, storage, registry and
// authzerr is either in the table or deliberately left out (it escapes only as a server fault, or
// its callers translate it in their own terms). A new sentinel must be decided here, not fall to
// 500 by accident.
func TestSentinelsOfTheLayersAreDecided(t *testing.T) {
	internal := map[string]bool{
		// lance: a dataset lancecat cannot read is a server fault.
		"lance.ErrCorruptManifest": true, "lance.ErrMixedNamingSchemes": true, "lance.ErrRowCountUnknown": true,
		"lance.ErrCorruptDeletionFile": true, "lance.ErrUnsupportedType": true,
		// storage: what a missing or raced object means is its caller's to say.
		"storage.ErrNotFound": true, "storage.ErrExists": true, "storage.ErrPreconditionFailed": true,
		"storage.ErrInvalidKey": true, "storage.ErrInvalidRange": true, "storage.ErrBucketTaken": true,
		// ErrNotLocal only tells a scan to read through the bucket instead; ErrUnscopable is
		// answered by the vending caller as unsupported, naming the location.
		"storage.ErrNotLocal": true, "storage.ErrUnscopable": true,
		// registry: absence, existence and a lost race are decided by each control operation.
		"registry.ErrExists": true, "registry.ErrNotFound": true, "registry.ErrChanged": true,
	}
	declared := map[string]error{
		"lance.ErrDatasetNotFound": lance.ErrDatasetNotFound, "lance.ErrVersionNotFound": lance.ErrVersionNotFound,
		"lance.ErrVersionExists": lance.ErrVersionExists, "lance.ErrCommitConflict": lance.ErrCommitConflict,
		"lance.ErrDatasetExists": lance.ErrDatasetExists, "lance.ErrUnsupportedFeature": lance.ErrUnsupportedFeature,
		"lance.ErrInvalidInput": lance.ErrInvalidInput, "lance.ErrInvalidRef": lance.ErrInvalidRef,
		"lance.ErrInvalidTableState": lance.ErrInvalidTableState, "lance.ErrColumnNotFound": lance.ErrColumnNotFound,
		"lance.ErrSchemaMismatch": lance.ErrSchemaMismatch, "lance.ErrTagNotFound": lance.ErrTagNotFound,
		"lance.ErrTagExists": lance.ErrTagExists, "lance.ErrBranchNotFound": lance.ErrBranchNotFound,
		"lance.ErrBranchExists": lance.ErrBranchExists, "lance.ErrRetryableConflict": lance.ErrRetryableConflict,
		"lance.ErrIndexNotFound": lance.ErrIndexNotFound, "lance.ErrIndexExists": lance.ErrIndexExists, "registry.ErrMalformed": registry.ErrMalformed,
		"authzerr.ErrUnavailable": authzerr.ErrUnavailable, "authzerr.ErrRefused": authzerr.ErrRefused,
	}
	listed := map[error]bool{}
	for _, row := range nserr.Sentinels() {
		listed[row.Err] = true
	}
	for _, dir := range []string{"lance", "storage", "registry", "authz/authzerr"} {
		pkg := filepath.Base(dir)
		for _, name := range exportedErrVars(t, filepath.Join("..", filepath.FromSlash(dir))) {
			key := pkg + "." + name
			if internal[key] {
				continue
			}
			assert.Check(t, listed[declared[key]], "%s is neither in the table nor deliberately internal", key)
		}
	}
}

// exportedErrVars lists the package-level exported Err* variables declared in dir's non-test files.
func exportedErrVars(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	assert.NilError(t, err)
	var names []string
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		assert.NilError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(id.Name, "Err") && id.IsExported() {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	assert.Assert(t, len(names) > 0, "no sentinels found in %s", dir)
	return names
}

// TestSentinelDetail: the client reads a lance.Error's own message (not its kind's text, not the
// context wrapped around it), and a typed error still wins over a sentinel it wraps.
func TestSentinelDetail(t *testing.T) {
	tagMissing := &lance.Error{Kind: lance.ErrTagNotFound, Message: `tag "v1" does not exist`}
	tests := []struct {
		name   string
		err    error
		code   nserr.Code
		detail string
	}{
		{"lance.Error", tagMissing, nserr.TableTagNotFound, `tag "v1" does not exist`},
		{"lance.Error wrapped", fmt.Errorf("table `a.b`: %w", tagMissing), nserr.TableTagNotFound, `tag "v1" does not exist`},
		{"bare sentinel", lance.ErrVersionNotFound, nserr.TableVersionNotFound, "lance: version not found"},
		{"typed over sentinel", nserr.InvalidInputf("bad: %w", lance.ErrVersionNotFound), nserr.InvalidInput, "bad: lance: version not found"},
		{"described", nserr.Describef(fmt.Errorf("%w: 7", lance.ErrVersionNotFound), "table `a`: version 7"), nserr.TableVersionNotFound, "table `a`: version 7"},
		{"joined", fmt.Errorf("x: %w", fmt.Errorf("%w and %w", fmt.Errorf("plain"), tagMissing)), nserr.TableTagNotFound, `tag "v1" does not exist`},
		{"uncoded", fmt.Errorf("plain"), nserr.Internal, "Internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, nserr.CodeOf(tt.err), tt.code)
			p := nserr.ProblemFor(tt.err, "/v1/x", "")
			assert.Equal(t, p.Code, int(tt.code))
			assert.Equal(t, p.Detail, tt.detail)
		})
	}
}

// TestOtherwise: a coded error (typed, or a sentinel of the table) passes; an uncoded one gets the
// default code and message, its cause kept.
func TestOtherwise(t *testing.T) {
	plain := fmt.Errorf("dial tcp: refused")
	got := nserr.Otherwise(nserr.ServiceUnavailable, plain, "the control root did not answer")
	assert.Equal(t, nserr.CodeOf(got), nserr.ServiceUnavailable)
	assert.Assert(t, errors.Is(got, plain))
	typed := nserr.PermissionDeniedf("no")
	assert.Equal(t, nserr.Otherwise(nserr.ServiceUnavailable, typed, "x"), error(typed))
	sentinel := fmt.Errorf("%w: k", registry.ErrMalformed)
	assert.Equal(t, nserr.Otherwise(nserr.Unauthenticated, sentinel, "x"), sentinel)
	assert.NilError(t, nserr.Otherwise(nserr.Internal, nil, "x"))
}

// TestFromTransport pins the transport's statuses to codes: the status is kept, the code is the
// spec's closest, and a transport failure at 5xx (but 503) is internal.
func TestFromTransport(t *testing.T) {
	tests := []struct {
		status     int
		code       nserr.Code
		wantStatus int
		detail     string
	}{
		{404, nserr.Unsupported, 404, "no operation is routed at this path"},
		{405, nserr.Unsupported, 405, "this path does not accept this method"},
		{400, nserr.InvalidInput, 400, "msg"},
		{413, nserr.InvalidInput, 413, "msg"},
		{415, nserr.InvalidInput, 415, "msg"},
		{422, nserr.InvalidInput, 422, "msg"},
		{401, nserr.Unauthenticated, 401, "msg"},
		{403, nserr.PermissionDenied, 403, "msg"},
		{429, nserr.Throttling, 429, "msg"},
		{503, nserr.ServiceUnavailable, 503, "Service unavailable"},
		{500, nserr.Internal, 500, "Internal error"},
		{502, nserr.Internal, 500, "Internal error"},
		{302, nserr.Internal, 500, "Internal error"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			p := nserr.ProblemFor(nserr.FromTransport(tt.status, "msg", errors.New("echo")), "/x", "")
			assert.Equal(t, p.Code, int(tt.code))
			assert.Equal(t, p.Status, tt.wantStatus)
			assert.Equal(t, p.Detail, tt.detail)
		})
	}
}
