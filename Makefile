# EnRoute: `make demo` runs the platform on a fresh machine, `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift
# The scratch PostgreSQL cluster `make test` starts afresh (scripts/postgres.sh reset) on PG_PORT, in a folder the
# postgres user can reach when make runs as root (a clone under /root is not).
PG_PORT ?= 15432
PG_DIR ?= /tmp/enroute-pg-$(PG_PORT)

.PHONY: demo test test-postgres test-sanitizers build deps bench clean

deps:
	@scripts/install-deps.sh build

build: deps
	$(SWIFT) build -c release --product enroute

demo: deps
	@scripts/demo.sh

test:
	@scripts/install-deps.sh test
	@if [ -x scripts/install-test-python.sh ]; then scripts/install-test-python.sh; fi
	scripts/install-web.sh   # Leaflet, Chromium and chromedriver for the browser tests (EnRouteWebTests.BrowserTests)
	python3 -m openapi_spec_validator docs/openapi.yaml
	SWIFT=$(SWIFT) scripts/check-dependencies.sh
	$(SWIFT) build --build-tests
	scripts/redis.sh start .build/redis >/dev/null   # the Redis tests' server (left running; scripts/redis.sh stop .build/redis)
	@# The repository suite runs every store on SQLite and PostgreSQL. The Redis suites run on their own afterwards: their
	@# real-time waits (blocking reads, key lifetimes) starve beside the whole suite on two cores.
	@url=$$(scripts/postgres.sh reset $(PG_DIR) $(PG_PORT)) && \
	  echo "== swift test (SQLite, and the repository suite on $$url)" && \
	  start=$$(date +%s) && ENROUTE_TEST_POSTGRES_URL=$$url ENROUTE_TEST_REDIS_OPTIONAL=1 $(SWIFT) test --skip-build && \
	  echo "== took $$(( $$(date +%s) - start )) s"
	ENROUTE_TEST_REDIS_URL=$$(scripts/redis.sh url .build/redis) $(SWIFT) test --skip-build --filter 'RedisKitTests|EnRouteRedisTests'
	@for t in Tests/Terminal/*.sh; do echo "== $$t"; ENROUTE_BIN="$$($(SWIFT) build --show-bin-path)/enroute" "$$t" || exit 1; done
	@echo "== scripts/schemathesis.sh"; BUDGET=$${BUDGET:-75} scripts/schemathesis.sh "$$($(SWIFT) build --show-bin-path)/enroute"

# The whole suite again with every test backend on PostgreSQL (not yet part of `make test`: under the load of the
# database's own processes the live-socket tests starve on this 2-core machine; see the README).
test-postgres:
	$(SWIFT) build --build-tests
	@url=$$(scripts/postgres.sh reset $(PG_DIR) $(PG_PORT)) && \
	  ENROUTE_TEST_STORE=postgres ENROUTE_TEST_POSTGRES_URL=$$url ENROUTE_TEST_REDIS_URL=$$(scripts/redis.sh start .build/redis) $(SWIFT) test --skip-build

# The suite under AddressSanitizer/LeakSanitizer and ThreadSanitizer (not part of `make test`: two
# full builds). Builds go to .build-asan and .build-tsan; see scripts/test-sanitizers.sh.
test-sanitizers:
	@scripts/install-deps.sh test
	SWIFT=$(SWIFT) scripts/test-sanitizers.sh

bench:
	@for b in bench/*.sh; do echo "== $$b"; "$$b" || exit 1; done

clean:
	@if [ -f .build/redis/redis.conf ]; then scripts/redis.sh stop .build/redis; fi
	rm -rf .build .build-asan .build-tsan .demo
