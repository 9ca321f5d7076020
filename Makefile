# The two commands of the README: `make demo` and `make test`.
# Pebble is built with its pure-Go zstd (no cgo), as docs/architecture.md says.
TAGS := -tags pebblegozstd

.PHONY: demo test build

demo:
	go run $(TAGS) ./cmd/gentlecrawl demo

test:
	./scripts/test

build:
	go build $(TAGS) -o bin/ ./cmd/gentlecrawl ./cmd/simweb
