# lancecat's image for people with Docker. It holds what `go run ./deploy/image` builds without a
# container engine (deploy/image/main.go is the reference): a static binary, the CA bundle, a
# passwd/group naming the non-root user 65532, /data and /tmp — no shell.
#   docker build -t lancecat .
#   docker run -p 2333:2333 -v lancecat-data:/data lancecat
# Stamp the build (`lancecat version`, lancecat_build_info) as `make build` does:
#   docker build --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ) -t lancecat .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
# The Go client is a module of its own the root's go.mod replaces with ./client.
COPY client/go.mod client/go.sum ./client/
RUN go mod download
COPY . .
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 GOOS=linux GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags="-s -w -X github.com/lancecat/lancecat/internal/buildinfo.version=${VERSION} -X github.com/lancecat/lancecat/internal/buildinfo.commit=${COMMIT} -X github.com/lancecat/lancecat/internal/buildinfo.date=${DATE}" \
      -o /out/usr/local/bin/lancecat ./cmd/lancecat
RUN mkdir -p /out/etc/ssl/certs /out/data /out/tmp && \
    cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/ && \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nlancecat:x:65532:65532:lancecat:/data:/sbin/nologin\n' >/out/etc/passwd && \
    printf 'root:x:0:\nlancecat:x:65532:\n' >/out/etc/group && \
    chown 65532:65532 /out/data && chmod 0750 /out/data && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /out/ /
ARG VERSION=dev
LABEL org.opencontainers.image.title="lancecat" \
      org.opencontainers.image.description="a governed Lance catalog (Lance Namespace REST)" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/lancecat/lancecat" \
      org.opencontainers.image.version="${VERSION}"
ENV PATH=/usr/local/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    LANCECAT_LISTEN=0.0.0.0:2333 \
    LANCECAT_ROOT=/data
USER 65532:65532
WORKDIR /data
VOLUME /data
# 2333: the API; 9090: the operations listener (--metrics-addr: /metrics, pprof) when set.
EXPOSE 2333 9090
ENTRYPOINT ["/usr/local/bin/lancecat"]
CMD ["serve"]
