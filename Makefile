GO ?= go
PKGS := ./...

.PHONY: test demo bench bench-compare fmt vet

## test: vet, gofmt check, race-enabled tests
test: vet
	@out=$$(gofmt -l . | grep -v '^vendor/'); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

## demo: play the spec's five scenarios through the real scheduler
demo:
	$(GO) run ./cmd/fairsched-demo

## bench: the benchmarks named in the README (ratios are reported as metrics)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt
	@command -v benchstat >/dev/null 2>&1 || $(GO) install golang.org/x/perf/cmd/benchstat@latest
	@$$( $(GO) env GOPATH )/bin/benchstat bench.txt

fmt:
	gofmt -w .
