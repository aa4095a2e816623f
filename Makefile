# EnRoute: `make demo` runs the platform on a fresh machine, `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift
# The scratch PostgreSQL cluster `make test` starts afresh (scripts/postgres.sh reset) on PG_PORT, in a folder the
# postgres user can reach when make runs as root (a clone under /root is not).
PG_PORT ?= 15432
PG_DIR ?= /tmp/enroute-pg-$(PG_PORT)
# The Redis server `make test` starts (scripts/redis.sh, data in .build/redis).
REDIS_PORT ?= 16379

.PHONY: demo cluster test test-sanitizers fuzz build deps bench callgrind clean format

deps:
	@scripts/install-deps.sh build

build: deps
	$(SWIFT) build -c release --product enroute

demo: deps
	@scripts/demo.sh

# Three nodes on one PostgreSQL and one Redis behind nginx, until Ctrl-C (scripts/cluster.sh --help; CLUSTER_ARGS="--nodes 2").
cluster:
	@scripts/cluster.sh $(CLUSTER_ARGS)

# Test targets that run on their own, after the rest, each in a pass of its own: the integration target (real sockets
# with real-time deadlines and processes: beside a thousand other tests on two cores their servers' handlers wait in
# the cooperative pool's queue past the clients' deadlines), the cluster target (several nodes on one store stepping
# their clocks; on PostgreSQL their reads block cooperative-pool threads, and beside the whole suite their steps starve
# past the 60 s limit) and the Redis targets (a real server, blocking reads, key lifetimes). Every other test target
# runs in the first pass. A filter names targets: `^(A|B)\.` matches every test of targets A and B.
INTEGRATION_TARGETS := EnRouteIntegrationTests
CLUSTER_TARGETS := EnRouteClusterTests
REDIS_TARGETS := RedisClientTests|EnRouteRedisTests

test:
	@scripts/install-deps.sh test
	@if [ -x scripts/install-test-python.sh ]; then scripts/install-test-python.sh; fi
	scripts/install-web.sh   # Leaflet, Chromium and chromedriver for the browser tests (EnRouteWebTests.BrowserTests)
	python3 -m openapi_spec_validator docs/openapi.yaml
	SWIFT=$(SWIFT) scripts/check-dependencies.sh
	scripts/check-portability.sh   # the client kit against the Apple platforms Package.swift declares
	SWIFT=$(SWIFT) scripts/check-format.sh   # swift format lint --strict and 120 columns
	scripts/check-sizes.sh   # no Sources file over 500 lines, no function over 80, but the listed exceptions
	$(SWIFT) build --build-tests
	scripts/redis.sh start .build/redis $(REDIS_PORT) >/dev/null   # the Redis tests' server (left running; scripts/redis.sh stop .build/redis)
	@# The whole suite twice: every test backend on SQLite (or memory), then every one on PostgreSQL. The repository
	@# suites run every store on both engines in each pass.
	@url=$$(scripts/postgres.sh reset $(PG_DIR) $(PG_PORT)) && \
	  for store in sqlite postgres; do \
	    echo "== swift test, test backends on $$store (repository suites on SQLite and $$url)" && start=$$(date +%s) && \
	    ENROUTE_TEST_STORE=$$store ENROUTE_TEST_POSTGRES_URL=$$url $(SWIFT) test --skip-build --skip '^($(INTEGRATION_TARGETS)|$(CLUSTER_TARGETS)|$(REDIS_TARGETS))\.' || exit 1; \
	    echo "== integration tests on $$store" && \
	    ENROUTE_TEST_STORE=$$store ENROUTE_TEST_POSTGRES_URL=$$url $(SWIFT) test --skip-build --filter '^($(INTEGRATION_TARGETS))\.' || exit 1; \
	    echo "== cluster tests on $$store" && \
	    ENROUTE_TEST_STORE=$$store ENROUTE_TEST_POSTGRES_URL=$$url ENROUTE_TEST_REDIS_URL=$$(scripts/redis.sh url .build/redis) \
	      $(SWIFT) test --skip-build --filter '^($(CLUSTER_TARGETS))\.' || exit 1; \
	    echo "== took $$(( $$(date +%s) - start )) s"; \
	  done
	ENROUTE_TEST_REDIS_URL=$$(scripts/redis.sh url .build/redis) ENROUTE_TEST_POSTGRES_URL=$$(scripts/postgres.sh url $(PG_DIR)) \
	  $(SWIFT) test --skip-build --filter '^($(REDIS_TARGETS))\.'
	@for t in Tests/Terminal/*.sh; do echo "== $$t"; ENROUTE_BIN="$$($(SWIFT) build --show-bin-path)/enroute" "$$t" || exit 1; done
	@echo "== scripts/schemathesis.sh"; BUDGET=$${BUDGET:-75} scripts/schemathesis.sh "$$($(SWIFT) build --show-bin-path)/enroute"
	@# Every parser's fuzz target for a short budget, after the rest so that nothing else shares the cores.
	scripts/fuzz.sh --budget $${FUZZ_TEST_SECONDS:-15}

# The suite under AddressSanitizer/LeakSanitizer and ThreadSanitizer (not part of `make test`: two
# full builds). Builds go to .build-asan and .build-tsan; see scripts/test-sanitizers.sh.
test-sanitizers:
	@scripts/install-deps.sh test
	SWIFT=$(SWIFT) scripts/test-sanitizers.sh

# Every fuzz target for FUZZ_SECONDS each (default 600), two at a time; what a run finds is kept in .build/fuzz.
FUZZ_SECONDS ?= 600
fuzz:
	@scripts/install-deps.sh build
	scripts/fuzz.sh --budget $(FUZZ_SECONDS)

# Rewrites the tree in the repository's format (.swift-format); scripts/check-format.sh checks it in `make test`.
format:
	$(SWIFT) format format --in-place --recursive --parallel Package.swift Sources Tests Fuzz Examples

bench:
	@for b in bench/*.sh; do echo "== $$b"; "$$b" || exit 1; done

# Instructions per request-path operation against bench/callgrind.tsv (a release build and a minute under valgrind;
# CI runs it after `make test`).
callgrind:
	bench/callgrind.sh

clean:
	@if [ -f .build/redis/redis.conf ]; then scripts/redis.sh stop .build/redis; fi
	rm -rf .build .build-asan .build-tsan .demo
