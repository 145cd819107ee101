package lance

// buf compiles ../shared/lance-format/protos (relative to the repo root)
// in-process and runs the protoc-gen-go pinned in go.mod, so neither protoc
// nor a plugin on PATH is needed. See buf.gen.yaml.
//go:generate go tool buf generate --template buf.gen.yaml
