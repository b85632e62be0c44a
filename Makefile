# Rill — two commands do everything: `make demo` and `make test`.

SWIFT ?= swift
DEMO_STORE ?= .build/rill-demo
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors
# The toolchain's docc: on the PATH, or beside the swift driver.
DOCC ?= $(shell command -v docc 2>/dev/null || echo "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/docc")
DOCS_SYMBOLS := .build/docs-symbol-graphs
# apt-get needs root; use sudo when not root and sudo exists.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)

.PHONY: demo test cluster-test deps build docs lint format bench oracle torture soak fuzz tsan clean

## Install the system packages Rill needs (Debian/Ubuntu), when missing.
deps:
	@# SQLite is the benchmarks' peer (rill-bench); the library never links it.
	@if ! pkg-config --exists lmdb sqlite3 2>/dev/null || ! command -v mdb_stat >/dev/null 2>&1; then \
		echo "Installing liblmdb-dev, lmdb-utils, libsqlite3-dev and pkg-config…"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev lmdb-utils libsqlite3-dev pkg-config >/dev/null; \
	fi
	@# The replicated log's transport: the NATS C client (libnats-dev) and, for its tests, nats-server.
	@if ! pkg-config --exists libnats 2>/dev/null || ! { command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ]; }; then \
		echo "Installing libnats-dev and nats-server…"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnats-dev nats-server >/dev/null; \
	fi
	@# The disk-full suite mounts a small ext4 image (mkfs.ext4, from e2fsprogs).
	@if ! command -v mkfs.ext4 >/dev/null 2>&1 && ! [ -x /usr/sbin/mkfs.ext4 ] && ! [ -x /sbin/mkfs.ext4 ]; then \
		echo "Installing e2fsprogs…"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq e2fsprogs >/dev/null || true; \
	fi
	@# The completion tests check the zsh and fish scripts with the shells themselves (skipped without them).
	@if ! command -v zsh >/dev/null 2>&1 || ! command -v fish >/dev/null 2>&1; then \
		echo "Installing zsh and fish…"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh fish >/dev/null || true; \
	fi
	@# The full-screen watch's tests run it in a pseudo-terminal under tmux (skipped without it).
	@if ! command -v tmux >/dev/null 2>&1; then \
		echo "Installing tmux…"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null || true; \
	fi
	@# The web page's browser tests drive a headless Chromium (skipped without it).
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
		echo "Installing chromium…"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq && \
		  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || true; \
	fi

## Run the sample library on an embedded store in $(DEMO_STORE)/, then show its history and a query of the past.
demo: deps
	$(SWIFT) build --product library-demo
	$(SWIFT) build --product rill
	@bin=$$($(SWIFT) build --show-bin-path); \
	echo; echo "\$$ library-demo $(DEMO_STORE)/library"; \
	$$bin/library-demo $(DEMO_STORE)/library && \
	echo && echo "\$$ rill log $(DEMO_STORE)/library --since 1 --before-after" && \
	$$bin/rill log $(DEMO_STORE)/library --since 1 --before-after && \
	echo && echo "\$$ rill query $(DEMO_STORE)/library 'Book where isRead == true' --as-of 2" && \
	$$bin/rill query $(DEMO_STORE)/library 'Book where isRead == true' --as-of 2 && \
	echo && echo "\$$ rill stats $(DEMO_STORE)/library" && \
	$$bin/rill stats $(DEMO_STORE)/library

# The documentation of the Rill module from its debug build: the public symbols' graphs, extracted by the
# compiler, and the catalog, converted with warnings as errors (a broken link fails). The graph of what the
# standard library's integers gain by conforming to Rill's protocols documents the standard library, not Rill.
define docs-convert
	rm -rf $(DOCS_SYMBOLS) && mkdir -p $(DOCS_SYMBOLS)
	$(SWIFT) symbolgraph-extract -module-name Rill -I "$$($(SWIFT) build --show-bin-path)/Modules" \
		-Xcc -fmodule-map-file=Sources/CLMDB/module.modulemap \
		-Xcc -fmodule-map-file=Sources/CPrefetch/include/module.modulemap \
		-minimum-access-level public -skip-inherited-docs -output-dir $(DOCS_SYMBOLS)
	rm -f $(DOCS_SYMBOLS)/Rill@Swift.symbols.json
	$(DOCC) convert Documentation/Rill.docc --additional-symbol-graph-dir $(DOCS_SYMBOLS) \
		--fallback-display-name Rill --fallback-bundle-identifier org.rill.Rill \
		--warnings-as-errors --output-path .build/docs
endef

## Build with warnings as errors, check the documentation, run every test, lint the sources.
## The library is also built optimized with testing enabled, as `swift test -c release` builds it
## in a package that depends on it (the compiler's cross-module optimization has crashed there
## where a debug build and a plain release build did not).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) build -c release --target Rill --build-path .build/release-testing -Xswiftc -enable-testing
	$(docs-convert)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS)
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Samples

## The cluster suite (debug build, about 90 s; see Documentation/Reliability.md): three nats-servers as a
## JetStream cluster, three Rill nodes saving to one replicated log, a server and a node killed with SIGKILL
## mid-load; every acknowledged save, every node's log, records and indexes, and every live query's changes
## checked against a replay of the stream.
# With make test's flags, so that CI reuses the build make test made.
cluster-test: deps
	$(SWIFT) build --product rill-torture $(SWIFT_FLAGS)
	$$($(SWIFT) build --show-bin-path)/rill-torture cluster --scale ci

## The oracles at full size, in a release build: queries (10,000 records × 2,000 queries each),
## live queries (200 live queries × 5,000 saves), replays (56 queries × 2,000 saves, 200 ranges).
oracle: deps
	RILL_ORACLE_RECORDS=10000 RILL_ORACLE_QUERIES=2000 $(SWIFT) test -c release \
		--filter 'FetchOracle|PredicateOracle|TextQueryOracle'
	RILL_LIVE_RECORDS=600 RILL_LIVE_QUERIES=200 RILL_LIVE_SAVES=5000 $(SWIFT) test -c release \
		--filter 'LiveQueryOracle'
	RILL_REPLAY_QUERIES=50 RILL_REPLAY_SAVES=2000 RILL_REPLAY_RANGES=200 $(SWIFT) test -c release \
		--filter 'RecordReplayTests'

## The reliability suites at full size, in a release build (under 20 minutes; see
## Documentation/Reliability.md): kill -9, power cuts, map growth, disk full, I/O errors, hostile
## clients, then 60 s of fuzzing for each target.
torture: deps
	$(SWIFT) build -c release --product rill-torture
	$(SWIFT) build -c release --product rill
	$(SWIFT) build -c release --product RillFaultShim
	.build/release/rill-torture all --scale torture
	$(MAKE) fuzz

FUZZ_TARGETS := query-parser http-request-reader json-reader record-coder store-operations
# Seconds of fuzzing per target.
FUZZ_TIME ?= 60
FUZZ_BIN := .build/fuzz/debug/rill-fuzz
FUZZ_ENV := SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0

## libFuzzer on each target for $(FUZZ_TIME) s, in a build of its own with the fuzzer and address
## sanitizers (see Documentation/Reliability.md). The committed corpus, Tests/Fuzz/Corpus/<target>/,
## becomes the smallest set of inputs that covers what it and the run found; the input of a crash or
## of a failed oracle is saved in Tests/Fuzz/Crashes/<target>/, and the target fails.
fuzz: deps
	$(SWIFT) build --build-path .build/fuzz --product rill-fuzz -Xswiftc -sanitize=fuzzer,address \
		-Xswiftc -use-ld=bfd -Xlinker --allow-multiple-definition -Xlinker --export-dynamic-symbol=LLVMFuzzerRunDriver
	@failed=""; for target in $(FUZZ_TARGETS); do \
		work=.build/fuzz/corpus/$$target; merged=.build/fuzz/merged/$$target; log=.build/fuzz/$$target.log; \
		corpus=Tests/Fuzz/Corpus/$$target; mkdir -p $$work $$corpus Tests/Fuzz/Crashes/$$target; \
		dict=Tests/Fuzz/Dictionaries/$$target.dict; \
		$(FUZZ_ENV) $(FUZZ_BIN) $$target -max_total_time=$(FUZZ_TIME) -max_len=1024 -timeout=10 \
			$$([ -f $$dict ] && echo -dict=$$dict) \
			-print_final_stats=1 -artifact_prefix=Tests/Fuzz/Crashes/$$target/ $$work $$corpus \
			> $$log 2>&1 || failed="$$failed $$target"; \
		rm -rf $$merged && mkdir -p $$merged && \
		$(FUZZ_ENV) $(FUZZ_BIN) $$target -merge=1 -use_counters=0 -max_len=1024 $$merged $$corpus $$work > $$log.merge 2>&1 && \
		[ -n "$$(ls $$merged)" ] && rm -f $$corpus/* && cp $$merged/* $$corpus/ \
		|| echo "$$target: the corpus was not merged (see $$log.merge)"; \
		echo "$$target: $$(grep -h 'stat::number_of_executed_units' $$log | awk '{print $$2}') executions," \
			"$$(grep -E '^#[0-9]+.*(DONE|cov:)' $$log | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')," \
			"corpus $$(ls $$corpus | wc -l) files, $$(ls Tests/Fuzz/Crashes/$$target | wc -l) crash reproducers"; \
	done; \
	if [ -n "$$failed" ]; then echo "failed:$$failed (see .build/fuzz/<target>.log)"; exit 1; fi

## 30 minutes of mixed load, reporting memory, file size and reader slots over time.
soak: deps
	$(SWIFT) build -c release --product rill-torture
	$(SWIFT) build -c release --product rill
	.build/release/rill-torture soak --scale torture

## The test suite under ThreadSanitizer, in a build directory of its own (see "Threads" in
## Documentation/Reliability.md). No suppressions: every lock Rill takes is one TSan sees.
tsan: deps
	$(SWIFT) test --sanitize=thread --build-path .build/tsan -Xswiftc -DRILL_THREAD_SANITIZER

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

## The API documentation (Documentation/Rill.docc and the doc comments of Rill), in .build/docs.
docs: deps
	$(SWIFT) build --target Rill $(SWIFT_FLAGS)
	$(docs-convert)

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Samples

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Samples

## Benchmarks (release build): make bench BENCH=save (or query, live, serve, resume, history)
bench: deps
	$(SWIFT) build -c release
	.build/release/rill-bench $(BENCH)

clean:
	rm -rf .build $(DEMO_STORE)
