GO ?= go
PKGS := ./...

.PHONY: test demo bench bench-compare fmt vet

## test: vet, gofmt check, race-enabled tests
test: vet
	@out=$$(gofmt -l . | grep -v '^vendor/'); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

DEMO_SVG ?= demo-output

## demo: the simulator over every scenario file and the built-in feature
## scenarios: a verdict line each, an SVG chart each in $(DEMO_SVG)/
demo:
	@$(GO) run ./cmd/fairsim -summary -svgdir $(DEMO_SVG) -builtin testdata/scenarios/*.yaml
	@echo "charts: $(DEMO_SVG)/<scenario>.svg; a full report: go run ./cmd/fairsim testdata/scenarios/<name>.yaml"

## bench: the benchmarks named in the README (ratios are reported as metrics)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt
	@command -v benchstat >/dev/null 2>&1 || $(GO) install golang.org/x/perf/cmd/benchstat@latest
	@$$( $(GO) env GOPATH )/bin/benchstat bench.txt

fmt:
	gofmt -w .
