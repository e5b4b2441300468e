# creativeapi: `make run` serves the API with a private PostgreSQL and demo
# data; `make test` runs every test. `make help` lists the rest.

GO        ?= go
TOOL      := $(GO) tool -modfile=tools/go.mod
# make run's defaults: each yields to the same variable set in the
# environment or on the command line (METRICS_ADDR= turns metrics off).
# ADDR, DEVCHAIN_ADDR and the rest reach the server from the environment.
DEV_MODE         ?= true
COOKIE_SECURE    ?= false
TREASURY_ADDRESS ?= TBXSw8fM4jpQkGc6zZjsVABFpVN7UvXPdV
METRICS_ADDR     ?= 127.0.0.1:8081
DEV_ENV   := DEV_MODE=$(DEV_MODE) COOKIE_SECURE=$(COOKIE_SECURE) TREASURY_ADDRESS=$(TREASURY_ADDRESS) METRICS_ADDR=$(METRICS_ADDR)
PROMETHEUS_ADDR ?= 127.0.0.1:9090
MOCK_PORT       ?= 4010
FUZZTIME  ?= 30s
BENCH_ARGS ?=
PROVEN    := $(CURDIR)/test-artifacts/proven

.DEFAULT_GOAL := help
.PHONY: help deps deps-run prometheus run s3-server mail-server stop test test-go lint generate check-generated bench bench-compare fuzz mock build soak race vulncheck \
	api-diff api-changelog api-release client-pack

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deps: deps-run ## Install what the tests need on a fresh Debian machine (PostgreSQL server, Chromium, Prometheus, Node packages).
	@sh scripts/ensure-chromium.sh
	@sh scripts/ensure-prometheus.sh
	@sh scripts/npm-ci.sh

deps-run: ## Install only what make run and make bench need (the PostgreSQL server).
	@sh scripts/ensure-postgres.sh

build: ## Build bin/creativeapi (creativeapi version names the commit).
	@[ -x bin/creativeapi ] || echo "make: building bin/creativeapi; the first build downloads and compiles its modules (several minutes on a 2-core machine, then seconds)"
	$(GO) build -ldflags "-X main.buildCommit=$$(git rev-parse HEAD 2>/dev/null)$$(git diff --quiet HEAD 2>/dev/null || echo +dirty)" -o bin/creativeapi ./cmd/creativeapi

client-pack: ## Build the TypeScript client as the npm package @creativeapi/client: dist/creativeapi-client-<version>.tgz.
	@sh scripts/pack-client.sh dist

run: deps-run build s3-server mail-server ## Migrate, seed the demo data and serve on http://localhost:8080, metrics on :8081 (private PostgreSQL, S3 store and Mailpit under .data/; SMTP_URL in the environment sends there instead; ADDR, METRICS_ADDR, ... win).
	$(DEV_ENV) ./bin/creativeapi serve --migrate --seed --devchain

s3-server: ## Build bin/versitygw, the S3-compatible store of make run (pinned in tools/s3/go.mod; about a minute the first time).
	@[ -x bin/versitygw ] || echo "make: building bin/versitygw, the S3-compatible store (a minute or two the first time)"
	$(GO) build -modfile=tools/s3/go.mod -o bin/versitygw github.com/versity/versitygw/cmd/versitygw

mail-server: ## Build bin/mailpit, the SMTP server and web inbox of make run and the tests (pinned in tools/mailpit/go.mod; about a minute the first time).
	@[ -x bin/mailpit ] || echo "make: building bin/mailpit, the mail server (about a minute the first time)"
	$(GO) build -modfile=tools/mailpit/go.mod -o bin/mailpit github.com/axllent/mailpit

stop: ## Stop the development server make run started (SIGTERM: it drains, then stops its PostgreSQL, S3 store, Mailpit and simulator).
	@state=$${DATA_DIR:-.data}/run.json; \
	pid=$$(sed -n 's/^ *"pid": *\([0-9][0-9]*\).*/\1/p' "$$state" 2>/dev/null); \
	if [ -n "$$pid" ] && kill "$$pid" 2>/dev/null; then echo "stopping the development server (pid $$pid)"; \
	else echo "no development server runs ($$state)"; fi

generate: ## Regenerate gen/, the TypeScript schema, the docs page and CHANGELOG-API.md from openapi.yaml, schema.sql and queries/.
	$(TOOL) oapi-codegen -config oapi-codegen.yaml openapi.yaml
	$(TOOL) sqlc generate
	@sh scripts/npm-ci.sh
	npm run --silent client:generate
	cd clients/typescript && npm pkg set --loglevel=error version=$$(sh ../../scripts/spec-version.sh ../../openapi.yaml)
	npm run --silent docs:build
	@sh scripts/api-changelog.sh

check-generated: generate ## Fail when generated files differ from the committed ones.
	@git diff --exit-code --stat -- gen clients/typescript/src/schema.ts clients/typescript/package.json \
		internal/docs/index.html CHANGELOG-API.md \
		|| { echo "generated files are stale: run 'make generate' and commit" >&2; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- gen); \
		if [ -n "$$untracked" ]; then echo "untracked generated files: $$untracked" >&2; exit 1; fi

lint: ## go vet, staticcheck, gofmt, go mod tidy -diff (the service, bench/ and tools/), the spec lints (Redocly, Spectral), the TypeScript type check.
	$(GO) vet ./...
	$(TOOL) staticcheck ./...
	cd bench && $(GO) vet ./...
	cd bench && $(GO) tool -modfile=../tools/go.mod staticcheck ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out" >&2; exit 1; fi
	$(GO) mod tidy -diff
	cd bench && $(GO) mod tidy -diff
	cd tools && $(GO) mod tidy -diff
	cd tools/s3 && $(GO) mod tidy -diff
	cd tools/mailpit && $(GO) mod tidy -diff
	@sh scripts/npm-ci.sh
	npm run --silent lint:spec
	npm run --silent lint:spectral
	npm run --silent client:typecheck
	npm run --silent client:test:typecheck

test: deps check-generated lint api-diff test-go ## Run every test (fresh machine: installs what is missing first).

api-diff: ## Fail on a change of openapi.yaml that can break clients of the last release (api/released/).
	@sh scripts/api-diff.sh

api-changelog: ## Write CHANGELOG-API.md: the API's changes since each release (also part of generate).
	@sh scripts/api-changelog.sh

api-release: ## Release the API at info.version: snapshot openapi.yaml into api/released/, empty the accepted breaking changes.
	@sh scripts/api-release.sh

# test-go runs every Go test once, under the race detector (RACE= turns it
# off for a quicker local run), with the TypeScript client and browser tests
# run from internal/e2e, recording which (operation, status) pairs each test
# proved; then the contract check fails on any declared pair nothing proved.
# One pass under -race, not a plain pass and then a race pass: the same
# tests and assertions, in about half the time on a 2-core machine.
RACE ?= -race
test-go: deps s3-server mail-server
	@rm -rf $(PROVEN) && mkdir -p $(PROVEN)
	S3_SERVER_BIN=$(CURDIR)/bin/versitygw MAIL_SERVER_BIN=$(CURDIR)/bin/mailpit CONTRACT_PROVEN_DIR=$(PROVEN) $(GO) test $(RACE) -count=1 ./...
	cd bench && S3_SERVER_BIN=$(CURDIR)/bin/versitygw $(GO) test $(RACE) -count=1 ./...
	CONTRACT_PROVEN_DIR=$(PROVEN) CONTRACT_CHECK=1 $(GO) test -count=1 ./internal/contract

bench: deps-run ## Server vs the bare floor server vs pgbench on a durable private PostgreSQL, sweeps and Go benchmarks included (~55 min on this 2-core machine); writes bench/reports/results.md.
	cd bench && $(GO) run . -out reports/results.md

bench-compare: deps-run ## Server vs floor vs pgbench at 8 and 32 clients, then the deposit concurrency sweep (8, 32, 64, 128 clients, as many users as clients and 8 users), 3 alternations each (~22 min on a quiet machine: ~12 + ~10 for the sweep); writes bench/reports/compare.md. BENCH_ARGS selects points, e.g. "-sweep-only -sweep 8,64 -floor-rounds 2 -duration 5s" (~3 min).
	cd bench && $(GO) run . -compare -out reports/compare.md $(BENCH_ARGS)

fuzz: deps ## Run each fuzz target for FUZZTIME (default 30s).
	@for target in $$($(GO) test -list 'Fuzz.*' ./... | grep '^Fuzz'); do \
		pkg=$$(grep -rl "func $$target(" --include='*_test.go' . | xargs -n1 dirname | head -1); \
		echo "fuzz $$pkg $$target"; \
		$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

race: test-go ## Every Go test under the race detector (what test-go does unless RACE= is given).

soak: deps ## Long reliability runs (SOAK=1): SIGKILL, SIGTERM, outages, two replicas.
	SOAK=1 $(GO) test -count=1 -v -run 'SIGKILL|SIGTERM|Outage|Unreachable|PoolExhaustion|TwoReplicas' ./internal/reliability ./internal/httpapi

vulncheck: ## govulncheck (needs https://vuln.go.dev, which this workplace cannot reach).
	$(TOOL) govulncheck ./...

prometheus: ## Run a local Prometheus with the alert rules on http://127.0.0.1:9090 (PROMETHEUS_ADDR), scraping make run's metrics at METRICS_ADDR (data under .data/prometheus).
	@sh scripts/ensure-prometheus.sh
	@mkdir -p .data
	sed -e 's|"127.0.0.1:8081"|"$(METRICS_ADDR)"|' -e 's|^  - alerts.yml$$|  - $(CURDIR)/ops/alerts.yml|' ops/prometheus.yml > .data/prometheus.yml
	prometheus --config.file=.data/prometheus.yml --storage.tsdb.path=.data/prometheus --web.listen-address=$(PROMETHEUS_ADDR)

mock: ## Serve Prism's mock of the spec (examples) on http://localhost:4010 (MOCK_PORT); needs only the Node packages.
	@sh scripts/npm-ci.sh
	npx --no-install prism mock -h 127.0.0.1 -p $(MOCK_PORT) openapi.yaml
