# SPDX-License-Identifier: MIT
# megatune: a plain GNU Makefile.
#
#   make          build build/megatune, build/megatune-probe (calibrate and
#                 probe, the only program linking MPI, BLAS and PAPI; its
#                 links build/probe-<name>) and everything buildable here
#   make test     install missing packages, build, run the whole test suite
#   make check    the same with warnings as errors, under ASan and UBSan
#   make demo     install, build, run the advisor on the bundled defaults
#   make bench    run the benchmarks and print their figures
#   make gpu-bundle  a self-contained single-GPU build, build/gpu-bundle.tar.xz
#                 (scripts/gpu-bundle.mk; MEGATRON_LM=<git repo> adds Megatron-LM)
#   make install  the programs, the tracer and CUDA libraries, man pages and
#                 bash and zsh completion under PREFIX (/usr/local), DESTDIR;
#                 make uninstall; make man; make deb (scripts/install.mk)
#   make help     these lines
#   make clean
#
# Variables: CC, BUILD (output folder), SANITIZE (e.g. address,undefined),
# WERROR=1, NO_DEPS=1 (skip the package check), PREFIX, DESTDIR,
# MEGATUNE_COMMIT (the commit --version names, when built outside git).

CC      ?= cc
BUILD   ?= build
CUDA_HOME ?= /usr/local/cuda
PYTHON  ?= python3

WARN    = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wformat=2 -Wwrite-strings -Wno-format-nonliteral
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) -MMD -MP
# OpenMPI (multi-process probes), OpenBLAS (CPU GEMM backend), PAPI (host
# counters): linked into megatune-probe and the probe tests only (PROBE_LIBS);
# megatune links none of them.  The CUDA backends are a separate library loaded
# at run time (probes/cuda.mk), so nothing links the CUDA libraries.
# Recursive (=) so that pkg-config runs after `make deps` installed the packages.
MPI_CFLAGS  = $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS    = $(shell pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
ALL_CFLAGS += $(MPI_CFLAGS) $(BLAS_CFLAGS) -isystem $(CUDA_HOME)/include $(if $(wildcard $(CUDA_HOME)/include/nvtx3/nvToolsExt.h),-DMT_HAVE_NVTX=1)
LDLIBS  = -lcjson -lyajl -lyaml -lz -ldl -lpthread -lm
PROBE_LIBS = $(MPI_LIBS) $(BLAS_LIBS) -lpapi

ifeq ($(WERROR),1)
ALL_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# libmegatune.a: everything but the probes (megatune, unit tests, benchmarks,
# fuzzers); libmegatune_probes.a: probes/ (megatune-probe, the probe tests).
PROBE_LIB_SRC = $(wildcard probes/*.c)
LIB_SRC    = $(wildcard lib/*.c) $(wildcard perfmodel/*.c) $(wildcard job/*.c) $(wildcard rules/*.c) $(wildcard tuner/*.c) \
             $(wildcard reports/*.c) $(wildcard import/*.c) $(wildcard validate/*.c) $(wildcard check/*.c) \
             $(filter-out profiler/inject.c,$(wildcard profiler/*.c)) \
             $(filter-out $(HISTORY_SRC),$(wildcard compare/*.c))
# the run history (SQLite): linked into megatune alone
HISTORY_SRC = compare/history.c
HISTORY_OBJ = $(HISTORY_SRC:%.c=$(BUILD)/%.o)
SQLITE_LIBS = -lsqlite3
PROBE_CLI_SRC = cli/cmd_calibrate.c cli/calibrate_launch.c cli/cmd_probe.c cli/probe_opts.c \
             cli/probe_main.c cli/cmd_proxy.c
CLI_SRC    = $(filter-out $(PROBE_CLI_SRC),$(wildcard cli/*.c))
DATA       = $(sort $(wildcard models/*.json)) $(sort $(wildcard profiles/*.json)) \
             $(sort $(wildcard rules/defs/*.rules))
LIB_OBJ    = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/bundled.o
CLI_OBJ    = $(CLI_SRC:%.c=$(BUILD)/%.o)
PROBE_LIB_OBJ = $(PROBE_LIB_SRC:%.c=$(BUILD)/%.o)
# megatune-probe: its commands and the shared cli/ helpers (no command, no main)
PROBE_EXE_OBJ = $(PROBE_CLI_SRC:%.c=$(BUILD)/%.o) \
             $(filter-out $(BUILD)/cli/cmd_%.o $(BUILD)/cli/main.o,$(CLI_OBJ))
# unit tests of probes/: linked with libmegatune_probes.a and PROBE_LIBS
PROBE_TESTS = $(BUILD)/tests/t-calibrate $(BUILD)/tests/t-probes-cpu
PROBE_TESTS += $(BUILD)/tests/t-proxy
UNIT_SRC   = $(wildcard tests/unit/t-*.c)
UNIT_BIN   = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC  = $(wildcard bench/*.c)
BENCH_BIN  = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZ_SRC   = $(wildcard tests/fuzz/fuzz-*.c)

.PHONY: all test check headers demo bench clean deps deps-test unit fuzz docs help FORCE

# the CUPTI tracer and its GPU check (built where the CUDA toolkit is)
.DEFAULT_GOAL := all

include profiler/inject.mk
include probes/cuda.mk
include scripts/gpu-bundle.mk
include scripts/install.mk

all: $(BUILD)/megatune $(BUILD)/megatune-probe $(BUILD)/.probe-links $(TRACE_LIB) $(GPU_TEST_BIN) \
	$(CUDA_LIB) $(CUDA_TEST_BIN)

# build/probe-<name>: megatune-probe under another name runs `probe <name>`,
# one link for each probe of the registry (`probe --list`)
$(BUILD)/.probe-links: $(BUILD)/megatune-probe
	@for n in $$($< probe --list); do echo ln -f $< $(BUILD)/probe-$$n; \
		ln -f $< $(BUILD)/probe-$$n || exit 1; done
	@touch $@

deps:
ifneq ($(NO_DEPS),1)
	@scripts/install-deps.sh
endif

deps-test:
ifneq ($(NO_DEPS),1)
	@scripts/install-deps.sh --test
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# the commit `megatune --version` names: $(BUILD)/gen/commit.h, rewritten only when it
# changes (scripts/version-commit.sh), included by cli/main.c alone
$(BUILD)/gen/commit.h: FORCE
	@scripts/version-commit.sh $@ $(MEGATUNE_COMMIT)
$(BUILD)/cli/main.o: $(BUILD)/gen/commit.h
$(BUILD)/cli/main.o: ALL_CFLAGS += -I$(BUILD)/gen
FORCE:

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra $< -o $@

$(BUILD)/gen/bundled.c: $(BUILD)/tools/embed $(DATA)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ $(foreach f,$(filter models/%,$(DATA)),model:$(f)) \
		$(foreach f,$(filter profiles/%,$(DATA)),profile:$(f)) \
		$(foreach f,$(filter rules/%,$(DATA)),rules:$(f))

$(BUILD)/gen/bundled.o: $(BUILD)/gen/bundled.c
	$(CC) $(ALL_CFLAGS) -Ilib -c $< -o $@

$(BUILD)/libmegatune.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libmegatune_probes.a: $(PROBE_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/megatune: $(CLI_OBJ) $(HISTORY_OBJ) $(BUILD)/libmegatune.a
	$(CC) $(LDFLAGS) $(CLI_OBJ) $(HISTORY_OBJ) $(BUILD)/libmegatune.a $(LDLIBS) $(SQLITE_LIBS) -o $@

$(BUILD)/megatune-probe: $(PROBE_EXE_OBJ) $(BUILD)/libmegatune_probes.a $(BUILD)/libmegatune.a
	$(CC) $(LDFLAGS) $(PROBE_EXE_OBJ) $(BUILD)/libmegatune_probes.a $(BUILD)/libmegatune.a \
		$(LDLIBS) $(PROBE_LIBS) -o $@

# t-dlsearch loads a small real library copied under fake toolkit and wheel folders
$(BUILD)/tests/libmtfake.so: tests/unit/fake-lib.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 -fPIC -shared -Wl,-soname,libmtfake.so.1 $< -o $@
$(BUILD)/tests/t-dlsearch: | $(BUILD)/tests/libmtfake.so

# t-search counts allocations: malloc and friends are wrapped at link time;
# t-validate-oom makes each of them fail in turn (strdup too)
WRAP_ALLOC = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
$(BUILD)/tests/t-search: TEST_LDFLAGS = $(WRAP_ALLOC)
$(BUILD)/tests/t-validate-oom: TEST_LDFLAGS = $(WRAP_ALLOC),--wrap=strdup

$(PROBE_TESTS): $(BUILD)/libmegatune_probes.a
$(PROBE_TESTS): TEST_PROBES = $(BUILD)/libmegatune_probes.a
$(PROBE_TESTS): TEST_PROBE_LIBS = $(PROBE_LIBS)

# t-cli-opts reads every command's option table: the cli/ objects of both programs
# but their two mains, with what megatune and megatune-probe link
CLI_TEST_OBJ = $(filter-out $(BUILD)/cli/main.o $(BUILD)/cli/probe_main.o,$(CLI_OBJ) \
             $(PROBE_CLI_SRC:%.c=$(BUILD)/%.o)) $(HISTORY_OBJ)
$(BUILD)/tests/t-cli-opts: $(CLI_TEST_OBJ) $(BUILD)/libmegatune_probes.a
$(BUILD)/tests/t-cli-opts: TEST_PROBES = $(CLI_TEST_OBJ) $(BUILD)/libmegatune_probes.a
$(BUILD)/tests/t-cli-opts: TEST_PROBE_LIBS = $(PROBE_LIBS) $(SQLITE_LIBS)

$(BUILD)/tests/t-%: tests/unit/t-%.c tests/unit/testutil.h $(BUILD)/libmegatune.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(TEST_LDFLAGS) $< $(TEST_PROBES) $(BUILD)/libmegatune.a \
		$(LDLIBS) $(TEST_PROBE_LIBS) -lcmocka -o $@

$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/libmegatune.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(BUILD)/libmegatune.a $(LDLIBS) -o $@

FUZZ_BIN   = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/%)
$(BUILD)/tests/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/driver.c $(BUILD)/libmegatune.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< tests/fuzz/driver.c $(BUILD)/libmegatune.a $(LDLIBS) -o $@

unit: $(UNIT_BIN) $(FUZZ_BIN)

test: deps-test all unit
	@BUILD=$(BUILD) tests/run.sh

check: deps-test headers
	$(MAKE) BUILD=build-check WERROR=1 SANITIZE=address,undefined NO_DEPS=1 test

# Every project header compiles alone: it includes what it uses.  New folders
# and files are found by the glob.  The device side's headers (probes/cuda/)
# are compiled as CUDA by nvcc where it is present, the others as C; the
# tracer's profiler/inject/records.h, which includes CUPTI's, where cupti.h is.
HEADER_DIRS = lib perfmodel job rules tuner probes import profiler validate compare reports check cli
HEADERS = $(sort $(shell find $(HEADER_DIRS) -name '*.h' -not -path 'probes/cuda/*' \
	$(if $(TRACE_LIB),,-not -path profiler/inject/records.h) 2>/dev/null))
CUDA_HEADERS = $(if $(HAVE_NVCC),$(sort $(wildcard probes/cuda/*.h)))
headers: deps-test
	@fail=0; for h in $(HEADERS); do \
		printf '#include "%s"\n' "$$h" | $(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -Werror \
			-I. -fsyntax-only -x c - || { echo "headers: $$h does not compile alone"; fail=1; }; \
	done; t=$$(mktemp -d); for h in $(CUDA_HEADERS); do \
		printf '#include "%s"\n' "$$PWD/$$h" >$$t/h.cu; \
		$(NVCC) -std=c++17 -I. -c $$t/h.cu -o $$t/h.o || \
			{ echo "headers: $$h does not compile alone"; fail=1; }; \
	done; rm -rf $$t; [ $$fail -eq 0 ] && \
		echo "headers: $(words $(HEADERS) $(CUDA_HEADERS)) compile alone"

demo: deps all
	$(BUILD)/megatune advise --model llama3-70b --cluster dgx-h100 --gpus 64 --seq 8192 --gbs 128

# docs/RULES.md is generated from the rule files and the fact table
docs: all
	$(BUILD)/megatune rules doc -o docs/RULES.md

bench: deps all $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b $(BUILD)/megatune || exit 1; done
	@sh bench/compare-calibrate.sh $(BUILD)

# libFuzzer targets for the parsers (needs clang):
#   make fuzz && build-fuzz/fuzz-model -max_total_time=60 models/
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang SANITIZE=address,undefined,fuzzer-no-link NO_DEPS=1 \
		build-fuzz/libmegatune.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
		echo clang -fsanitize=fuzzer,address,undefined $$f -o build-fuzz/$$n; \
		clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
			$$f build-fuzz/libmegatune.a $(LDLIBS) -o build-fuzz/$$n || exit 1; done

help:
	@sed -n '/^#   make/,/^#$$/{/^#$$/q;s/^# //;p}' Makefile

clean:
	rm -rf build build-check build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
