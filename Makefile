# EnRoute: `make demo` runs the platform on a fresh machine, `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift

.PHONY: demo test build deps bench clean

deps:
	@scripts/install-deps.sh build

build: deps
	$(SWIFT) build -c release --product enroute

demo: deps
	@scripts/demo.sh

test:
	@scripts/install-deps.sh test
	@if [ -x scripts/install-test-python.sh ]; then scripts/install-test-python.sh; fi
	python3 -m openapi_spec_validator docs/openapi.yaml
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	@for t in Tests/Terminal/*.sh; do echo "== $$t"; ENROUTE_BIN="$$($(SWIFT) build --show-bin-path)/enroute" "$$t" || exit 1; done
	@echo "== scripts/schemathesis.sh"; BUDGET=$${BUDGET:-75} scripts/schemathesis.sh "$$($(SWIFT) build --show-bin-path)/enroute"

bench:
	@for b in bench/*.sh; do echo "== $$b"; "$$b" || exit 1; done

clean:
	rm -rf .build .demo
