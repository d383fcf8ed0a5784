# Entry points for people. CMake + CTest do the real work (see docs/testing.md).
#   make demo   install what is missing, build, run mfu on the bundled example
#   make test   install what is missing, build, run every test (ends with CTest's summary)
#   make bench  ingest throughput against Python and jq (bench/README.md; LINES=200000 for less)
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
MFU   := $(BUILD)/mfu

.PHONY: all deps build demo test clean lint format bench

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash examples/demo.sh $(MFU)

test: build
	@ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure --no-label-summary

bench: build
	@bash bench/ingest.sh --lines $(or $(LINES),400000) $(MFU)

lint: build
	@bash scripts/checksrc .

format:
	@clang-format -i $$(git ls-files 'src/*.[ch]' 'include/*.h' 'tests/*.c' 'bench/*.c')

clean:
	@rm -rf $(BUILD) build-asan
