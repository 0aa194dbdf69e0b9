GO ?= go
SHELL := /bin/bash
PKGS := ./...

# Fuzz targets, as package:Target. Each runs for FUZZ_BRIEF in `make check`
# (on top of its committed corpus, which every `go test` replays) and for
# FUZZTIME in `make fuzz`.
FUZZ_TARGETS := ./internal/scenario:FuzzParse ./policy:FuzzJobTypeConfig ./policy:FuzzLimits ./policy:FuzzRetryPolicy ./core:FuzzCoreOps ./boltstore:FuzzCorruptStore ./boltstore:FuzzDecodeRecord .:FuzzExtremeValues .:FuzzCallerStrings ./policyfile:FuzzParse ./trace:FuzzTrace ./internal/replay:FuzzReplay ./pgstore:FuzzSuccessPayloads
# A count, not a duration: Go 1.26's fuzzing coordinator can fail a
# target with "context deadline exceeded" and no failing input when a
# duration runs out under load (go.dev/issue/75804, fixed in Go 1.27). A
# target that fails is run once more, showing its output: a failing input
# it wrote fails it again; the coordinator's race does not.
FUZZ_BRIEF ?= 2000x
FUZZTIME ?= 2m
BENCH_COUNT ?= 6

.PHONY: test fmt-check check check-more no-binaries browser demo bench bench-cluster bench-cluster-net bench-module bench-smoke fuzz fuzz-brief soak fmt vet lint race invariant-long memsim

# TEST_BUILD builds test binaries without debug information (DWARF): no
# test reads it, and compiling and linking some forty test binaries
# without it takes a fifth less CPU on a cold cache. The targets below that
# use it share make test's build cache.
TEST_BUILD := -ldflags=-w -gcflags=all=-dwarf=false

## test: gofmt, then the unit, scenario and example tests with a short
## invariant run (go test -short) and every vet analyzer (-vet=all, what
## `go vet` runs: go test vets each package as it compiles it, so the
## build is done once), then a line per skipped test and why.
## `make test TESTSUM_FLAGS=-slowest=10` ends with the ten slowest packages
## and tests.
TESTSUM_FLAGS ?=
test: fmt-check
	@echo "test: go test -short -vet=all ./..., a line per package as it ends"
	@set -o pipefail; $(GO) test -short -vet=all $(TEST_BUILD) -json $(PKGS) | $(GO) run ./internal/testsum $(TESTSUM_FLAGS)

## check: what test does, then -race over everything (the full invariant
## run included), a long invariant run, a brief run of every fuzz target and
## the bench/ module's tests; check-more is all of it but test (CI runs
## test, then check-more, so that the tests do not run twice)
check: test check-more
check-more: no-binaries browser race invariant-long memsim fuzz-brief bench-smoke bench-module

## no-binaries: git tracks no compiled file (ELF, Mach-O, PE, .a, .test);
## `make test` runs the same test among the root package's
no-binaries:
	$(GO) test $(TEST_BUILD) -count=1 -run '^TestNoCompiledFilesTracked$$' .

## browser: debugpage's browser test (Chromium driven by chromedp; it
## skips, saying why, without a Chromium). Behind a build tag so that
## make test does not compile chromedp, a large dependency.
browser:
	$(GO) test -count=1 -tags browser -run '^TestBrowser$$' ./debugpage/

## bench-smoke: every benchmark once (-benchtime 1x), so that none rots
## unnoticed between `make bench` runs
bench-smoke:
	@out=$$($(GO) test -count=1 -run '^$$' -bench . -benchtime 1x $(PKGS) 2>&1) || { echo "$$out" | grep -v '^Benchmark'; exit 1; }; echo "bench-smoke: every benchmark ran once"

## bench-module: the tests of the bench/ module (its own go.mod): the
## cluster harness at a tiny size on PostgreSQL, the peers built
bench-module:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./... && { out=$$($(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./... 2>&1) || { echo "$$out" | grep -v '^Benchmark'; exit 1; }; }

lint: vet fmt-check

fmt-check:
	@out=$$(gofmt -l . | grep -v '^vendor/'); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	@echo "vet: building and vetting every package (a fresh clone's first build takes a minute or two)"
	@{ while sleep 15; do echo "… vet $${SECONDS}s: still building and vetting"; done; } & ticker=$$!; \
		$(GO) vet $(PKGS); rc=$$?; kill $$ticker; exit $$rc

race:
	@set -o pipefail; $(GO) test -race -count=1 -json $(PKGS) | $(GO) run ./internal/testsum

invariant-long:
	$(GO) test $(TEST_BUILD) -count=1 -run '^TestInvariants$$' -invariant.seeds=4000 -invariant.first=1001 .

## memsim: the cluster on the in-memory backend (internal/cluster/memback) in
## virtual time, 3 instances and injected faults, over thousands of seeds:
## durable jobs (TestMemSim), then RunSync calls (TestMemSimRunSync)
memsim:
	$(GO) test $(TEST_BUILD) -count=1 -run '^TestMemSim$$' ./internal/cluster/ -args -memsim.seeds=3000
	$(GO) test $(TEST_BUILD) -count=1 -run '^TestMemSimRunSync$$' ./internal/cluster/ -args -memsimrs.seeds=2000

fuzz-brief:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZ_BRIEF)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZ_BRIEF) $$pkg >/dev/null || \
			$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZ_BRIEF) $$pkg || exit 1; \
	done

## fuzz: every fuzz target for FUZZTIME (default 2m) each
fuzz:
	@$(MAKE) --no-print-directory fuzz-brief FUZZ_BRIEF=$(FUZZTIME)

## soak: the randomized invariant simulation over a million jobs, with throughput
soak:
	$(GO) test -run 'TestSoak' -invariant.soak -v -timeout 60m .

DEMO_SVG ?= demo-output

DEMO_CLUSTER ?= testdata/scenarios/02-two-client-burst.yaml

## demo: the simulator over every scenario file and the built-in feature
## scenarios: a verdict line each, an SVG chart each in $(DEMO_SVG)/; the
## restart of durable jobs; a recorded trace replayed against bounds
## (docs/traffic-checks.md); then one scenario (DEMO_CLUSTER) played for real
## on a cluster of 3 instances over PostgreSQL (FAIRSCHED_TEST_DATABASE_URL's
## server or a throwaway one from the installed binaries; skipped, saying
## why, without either)
demo:
	@$(GO) run ./cmd/fairsim -summary -svgdir $(DEMO_SVG) -builtin testdata/scenarios/*.yaml
	@echo
	@$(GO) run ./cmd/fairsim -restart
	@echo
	@$(GO) run ./cmd/fairsim -replay cmd/fairsim/testdata/small.trace -max-concurrency 1 -min-share '*=10%' -max-p95 '*=7s'
	@echo
	@$(GO) run ./cmd/fairsim -cluster 3 $(DEMO_CLUSTER)
	@echo
	@echo "charts: $(DEMO_SVG)/<scenario>.svg; a full report: go run ./cmd/fairsim testdata/scenarios/<name>.yaml"

## bench: every benchmark BENCH_COUNT (≥ 6) times — this module's, then
## the peers' in bench/ (its own module) — then a benchstat table (ratios to
## the in-run baselines are reported as extra metrics), benchstat's
## comparison of fairness with two levels (tenants) against one, and the
## table of the hot path's goals (internal/benchgoals). BENCH (a -bench
## pattern) and BENCH_TIME (a -benchtime) narrow a run: `make bench
## BENCH=Hierarchical BENCH_TIME=2000x` is the levels' comparison alone.
BENCH ?= .
BENCH_TIME ?= 1s
bench:
	@set -o pipefail; $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCH_TIME) -benchmem -count $(BENCH_COUNT) ./... | tee bench.txt
	@set -o pipefail; cd bench && $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCH_TIME) -benchmem -count $(BENCH_COUNT) ./... | tee -a ../bench.txt
	@command -v benchstat >/dev/null 2>&1 || $(GO) install golang.org/x/perf/cmd/benchstat@latest
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin" benchstat bench.txt | tee bench-table.txt
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin" benchstat -filter '.name:Hierarchical' -col /levels bench.txt | tee -a bench-table.txt
	@$(GO) run ./internal/benchgoals bench.txt | tee bench-goals.txt

## bench-cluster: fairsched's cluster mode against River on one PostgreSQL
## (the module in bench/; a throwaway server from the installed binaries,
## or BENCH_CLUSTER_FLAGS=-url=…), a few minutes; the throughput runs
## (scenarios 1 and 3) in 3 rounds, each system's median kept.
## BENCH_CLUSTER_FLAGS="-full -name cluster-bench-full" for the full
## sizes: a million jobs (docs/cluster.md: how long). Writes docs/cluster-bench.{md,json,svg}
## (not kept in git: docs/cluster.md keeps the net and full runs).
BENCH_CLUSTER_FLAGS ?=
bench-cluster:
	cd bench && $(GO) run ./cmd/clusterbench -out ../docs -rounds 3 $(BENCH_CLUSTER_FLAGS)

## bench-cluster-net: bench-cluster twice, direct and with PostgreSQL behind
## a TCP proxy that delays each round trip by 1 ms (BENCH_CLUSTER_FLAGS=
## -delay=…), one table each. Writes docs/cluster-bench-net.{md,json,svg}.
bench-cluster-net:
	cd bench && $(GO) run ./cmd/clusterbench -out ../docs -name cluster-bench-net -rounds 3 -via both $(BENCH_CLUSTER_FLAGS)

fmt:
	gofmt -w .
