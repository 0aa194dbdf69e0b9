GO ?= go
PKGS := ./...

# Fuzz targets, as package:Target. Each runs for FUZZ_BRIEF in `make test`
# (on top of its committed corpus, which every `go test` replays) and for
# FUZZTIME in `make fuzz`.
FUZZ_TARGETS := ./internal/scenario:FuzzParse ./policy:FuzzJobTypeConfig ./policy:FuzzLimits ./policy:FuzzRetryPolicy ./core:FuzzCoreOps ./boltstore:FuzzCorruptStore .:FuzzExtremeValues
FUZZ_BRIEF ?= 3s
FUZZTIME ?= 2m
BENCH_COUNT ?= 6

.PHONY: test demo bench fuzz fuzz-brief soak fmt vet

## test: vet, gofmt check, race-enabled tests, a brief run of every fuzz target
test: vet
	@out=$$(gofmt -l . | grep -v '^vendor/'); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -race -count=1 $(PKGS)
	@$(MAKE) --no-print-directory fuzz-brief

vet:
	$(GO) vet $(PKGS)

fuzz-brief:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZ_BRIEF)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZ_BRIEF) $$pkg >/dev/null || { $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZ_BRIEF) $$pkg; exit 1; }; \
	done

## fuzz: every fuzz target for FUZZTIME (default 2m) each
fuzz:
	@$(MAKE) --no-print-directory fuzz-brief FUZZ_BRIEF=$(FUZZTIME)

## soak: the randomized invariant simulation over a million jobs, with throughput
soak:
	$(GO) test -run 'TestSoak' -invariant.soak -v -timeout 60m .

DEMO_SVG ?= demo-output

## demo: the simulator over every scenario file and the built-in feature
## scenarios: a verdict line each, an SVG chart each in $(DEMO_SVG)/
demo:
	@$(GO) run ./cmd/fairsim -summary -svgdir $(DEMO_SVG) -builtin testdata/scenarios/*.yaml
	@echo "charts: $(DEMO_SVG)/<scenario>.svg; a full report: go run ./cmd/fairsim testdata/scenarios/<name>.yaml"

## bench: every benchmark BENCH_COUNT (≥ 6) times, then a benchstat table
## (ratios to the in-run baselines are reported as extra metrics)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./... | tee bench.txt
	@command -v benchstat >/dev/null 2>&1 || $(GO) install golang.org/x/perf/cmd/benchstat@latest
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin" benchstat bench.txt | tee bench-table.txt

fmt:
	gofmt -w .
