# Rill — two commands do everything: `make demo` and `make test`.

SWIFT ?= swift
DEMO_STORE ?= .build/rill-demo
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors
# apt-get needs root; use sudo when not root and sudo exists.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)

.PHONY: demo test deps build lint format bench oracle clean

## Install the system packages Rill needs (Debian/Ubuntu), when missing.
deps:
	@if ! pkg-config --exists lmdb 2>/dev/null || ! command -v mdb_stat >/dev/null 2>&1; then \
		echo "Installing liblmdb-dev, lmdb-utils and pkg-config…"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev lmdb-utils pkg-config >/dev/null; \
	fi

## Run the sample library on an embedded store in $(DEMO_STORE)/, then show its log.
demo: deps
	$(SWIFT) build --product library-demo
	$(SWIFT) build --product rill
	@bin=$$($(SWIFT) build --show-bin-path); \
	echo; echo "\$$ library-demo $(DEMO_STORE)/library"; \
	$$bin/library-demo $(DEMO_STORE)/library && \
	echo && echo "\$$ rill log $(DEMO_STORE)/library" && \
	$$bin/rill log $(DEMO_STORE)/library && \
	echo && echo "\$$ rill stats $(DEMO_STORE)/library" && \
	$$bin/rill stats $(DEMO_STORE)/library

## Build with warnings as errors, run every test, lint the sources.
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS)
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Samples

## The oracles at full size, in a release build: queries (10,000 records × 2,000 queries each),
## live queries (200 live queries × 5,000 saves).
oracle: deps
	RILL_ORACLE_RECORDS=10000 RILL_ORACLE_QUERIES=2000 $(SWIFT) test -c release \
		--filter 'FetchOracle|PredicateOracle|TextQueryOracle'
	RILL_LIVE_RECORDS=600 RILL_LIVE_QUERIES=200 RILL_LIVE_SAVES=5000 $(SWIFT) test -c release \
		--filter 'LiveQueryOracle'

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Samples

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Samples

## Benchmarks (release build): make bench BENCH=save (or query, live, serve, resume)
bench: deps
	$(SWIFT) build -c release
	.build/release/rill-bench $(BENCH)

clean:
	rm -rf .build $(DEMO_STORE)
