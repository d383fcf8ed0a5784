# Entry points for people. CMake + CTest do the real work (see docs/testing.md).
#   make demo   install what is missing, build, ingest + report the bundled examples, serve them
#   make test   install what is missing, build, run every test (ends with CTest's summary)
#   make bench  run every benchmark in bench/ (rates and ratios against peers; not a test)
#   make fuzz   build the libFuzzer targets (clang) and run each FUZZ_SECONDS (default 60)
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
MFU   := $(BUILD)/mfu

.PHONY: all deps build demo test clean lint format bench fuzz

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# The demo needs only the tool, not the tests.
demo: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) --target mfu -j $(JOBS) -- --no-print-directory
	@bash examples/demo.sh $(MFU)

test: build
	@ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure --no-label-summary

bench: build
	@echo "== store: batched inserts vs one row per commit" && $(BUILD)/mfu-bench-store_ingest
	@bash bench/ingest.sh --lines $(or $(LINES),400000) $(MFU)
	@echo "== report: CPU beyond ingest and B/step, against main" && bash bench/report_scale.sh --sizes "$(or $(SCALE_SIZES),100000 1000000 10000000)" --rounds $(or $(ROUNDS),5) $(MFU)

# Fuzzing (tests/fuzz, docs/testing.md): FUZZ_SECONDS per target, FUZZ_JOBS targets at a time,
# FUZZ_TARGETS to pick some (e.g. "ingest store"). Crash inputs go to tests/fuzz/regressions.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
fuzz: deps
	@FUZZ_JOBS=$(FUZZ_JOBS) bash scripts/fuzz build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Static checks beyond the compiler's (also in `make test`): the banned-call scan, the format
# and cppcheck, at the versions scripts/deps.sh installs.
lint:
	@bash scripts/checksrc .
	@bash scripts/lint format
	@bash scripts/lint cppcheck

format:
	@clang-format-14 -i $$(git ls-files 'src/*.[ch]' 'include/*.h' 'tests/*.[ch]' 'bench/*.c')

clean:
	@rm -rf $(BUILD) build-asan build-release build-fuzz
