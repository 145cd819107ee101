# lancecat — the two commands a new user needs:
#   make serve   run the catalog on the embedded default (./lancecat-data on 127.0.0.1:2333)
#   make test    run every test, with a real MinIO and OpenFGA started for the run (and headless
#                Chromium for the console's browser tests)

SHELL := /bin/bash
GO ?= go
# The Lance Namespace spec stays outside the repo; the default is the file the pin names
# (spec/lance-namespace.pin.json "file"); override to generate from or diff another file.
SPEC ?= $(shell sed -n 's/^ *"file": *"\(.*\)",*$$/\1/p' spec/lance-namespace.pin.json)
# Bounded fuzzing of every Fuzz target during `make test`.
FUZZTIME ?= 10s

# What a build says it is (`lancecat version`, the lancecat_build_info metric): stamped into
# internal/buildinfo by the linker. The date is the commit's (reproducible: the same commit builds
# the same bytes), not the wall clock's.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)
BUILDINFO = github.com/lancecat/lancecat/internal/buildinfo
LDFLAGS = -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(DATE)
# Where `make release` writes the binaries and SHA256SUMS.
DIST ?= dist
RELEASE_ARCHES ?= amd64 arm64

.PHONY: all build release serve generate check-generated test test-unit fuzz lint bench pin-spec spec-diff clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/lancecat ./cmd/lancecat

# Static linux binaries (CGO_ENABLED=0, -trimpath, stripped) for each of RELEASE_ARCHES, named
# lancecat-<version>-linux-<arch>, with SHA256SUMS beside them (`sha256sum -c SHA256SUMS`).
# Nothing is fetched beyond the Go module proxy.
release:
	rm -rf $(DIST) && mkdir -p $(DIST)
	set -e; for arch in $(RELEASE_ARCHES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
	    -o $(DIST)/lancecat-$(VERSION)-linux-$$arch ./cmd/lancecat; \
	done
	cd $(DIST) && sha256sum lancecat-* > SHA256SUMS && cat SHA256SUMS

serve: build
	./bin/lancecat serve

# Deterministic: running it on unchanged inputs changes no file (checked by `make test`).
# Without the spec file (no ../shared beside the repo) gen/nsapi stays as committed: the test
# spec/TestGeneratedCodeIsFromThePin still checks it against the pin. The route test
# (server/routes_gen_test.go) is generated from the spec gen/nsapi embeds, so it needs no ../shared.
generate:
	@if [ -f "$(SPEC)" ]; then \
	  set -x; $(GO) run ./spec/checkpin $(SPEC) && \
	  $(GO) tool oapi-codegen -config spec/nsapi.codegen.yaml $(SPEC) && \
	  $(GO) tool oapi-codegen -config spec/nsclient.codegen.yaml $(SPEC); \
	elif [ "$(origin SPEC)" = file ]; then \
	  echo "generate: the pinned spec '$(SPEC)' is absent (is ../shared beside the repo?): gen/nsapi and client/nsclient kept as committed"; \
	else \
	  echo "generate: SPEC=$(SPEC) does not exist" >&2; exit 1; \
	fi
	$(GO) run ./spec/routetest -o server/routes_gen_test.go
	$(GO) tool oapi-codegen -config spec/controlapi.codegen.yaml spec/control.yaml
	$(GO) tool oapi-codegen -config spec/controlclient.codegen.yaml spec/control.yaml
	@if [ -d ../shared/lance-format/protos ]; then set -x; $(GO) generate ./lance/...; \
	else echo "generate: ../shared/lance-format/protos is absent: lance/pb kept as committed"; fi
	$(GO) generate ./authz/...
	$(GO) run ./internal/docgen -o docs/reference

check-generated:
	scripts/check-generated.sh

# The first step of a spec bump: what moving from the pinned spec to SPEC changes, in Markdown
# (operations, parameters, schemas, and the handler file each change touches).
PINNED = $(shell sed -n 's/^ *"file": *"\(.*\)",*$$/\1/p' spec/lance-namespace.pin.json)
PINNED_VERSION = $(shell sed -n 's/^ *"version": *"\(.*\)",*$$/\1/p' spec/lance-namespace.pin.json)
spec-diff:
	@test "$(origin SPEC)" != file || { echo "usage: make spec-diff SPEC=path/to/new/spec.yaml (compared with the pinned $(PINNED))"; exit 2; }
	@$(GO) run ./spec/specdiff -old-label "$(PINNED_VERSION) ($(notdir $(PINNED)))" $(PINNED) $(SPEC)

# The spec bump workflow (docs/spec-bump.md): make spec-diff SPEC=new.yaml, then
# make pin-spec SPEC=new.yaml VERSION=<upstream release tag or commit> && make generate
pin-spec:
	@test -n "$(VERSION)" || { echo "usage: make pin-spec SPEC=path/to/spec.yaml VERSION=<upstream release tag or commit>"; exit 2; }
	$(GO) run ./spec/checkpin -update -version $(VERSION) $(SPEC)

# Every test, never skipping: MinIO and OpenFGA are built (cached) and started for the run.
# The modules of their own (deploy/, client/: the Go client other services import) are tested
# apart, as ./... of the root leaves them out.
# Headless Chromium for the console's browser tests is installed (cached) alongside the services.
test: check-generated lint
	LANCECAT_TEST_CHROMIUM=$$(scripts/chromium/install.sh) && export LANCECAT_TEST_CHROMIUM && \
	LANCECAT_REQUIRE_SERVICES=1 scripts/with-services.sh scripts/with-fixtures.sh $(GO) test -race -count=1 -timeout 45m ./...
	cd deploy && LANCECAT_REQUIRE_SERVICES=1 $(GO) test -count=1 -timeout 10m ./...
	cd client && $(GO) test -race -count=1 -timeout 10m ./...
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# Unit tests only: tests needing MinIO or OpenFGA skip with a message saying so.
test-unit:
	$(GO) test ./...
	cd client && $(GO) test ./...

fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd deploy && $(GO) vet ./...
	cd client && $(GO) vet ./... && $$($(GO) -C .. tool -n staticcheck) ./...
	$(GO) tool staticcheck ./...

# Go benchmarks, then scripts/bench/run.sh: lancecat vs the official SDK in one run (file writes/scans;
# the data plane through `lancecat serve` over REST vs the SDK embedded).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	scripts/bench/run.sh

clean:
	rm -rf bin $(DIST)
