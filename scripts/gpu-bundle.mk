# SPDX-License-Identifier: MIT
# make gpu-bundle: a self-contained single-GPU build of megatune, packed as
# $(BUILD)/gpu-bundle.tar.xz, for a GPU machine that has a driver, Python and
# PyTorch but none of Debian's -dev packages (no cJSON, yajl, OpenMPI, OpenBLAS,
# PAPI).  Included by the top-level Makefile (which provides CC, BUILD, the object
# lists, ALL_CFLAGS, MPI_CFLAGS, CUDA_LIB, TRACE_LIB and the test binaries).
#
#   megatune, megatune-probe   linked against the static archives Debian has
#                              (yajl, zlib, SQLite, OpenBLAS with gfortran and
#                              quadmath, PAPI with libpfm) and a libcjson.a built
#                              from Debian's cJSON source (scripts/static-cjson.sh);
#                              megatune-probe's three MPI files compiled against
#                              probes/onerank/mpi.h, a one-rank MPI (no launcher is
#                              used on one GPU).  ldd of both: libc and libm only.
#   libmegatune_cuda.so,       as `make` builds them: the CUDA runtime linked in,
#   libmegatune_trace.so       cuBLASLt/cuDNN/NCCL/CUPTI found at run time in the
#                              toolkit or the pip wheels (lib/dlsearch.h); ldd: libc,
#                              libm, libstdc++, libgcc_s.
#   tests/ref-gemm,            the GPU tests' helpers (they link libcublasLt and
#   tests/gpu-trace-check      libcudart: scripts/gpu-campaign.sh puts the toolkit's
#                              and the wheels' folders on LD_LIBRARY_PATH for them).
#   megatron-lm.tgz            with MEGATRON_LM=<a git repository of NVIDIA/Megatron-LM>:
#                              megatron/, pretrain_gpt.py, gpt_builders.py,
#                              model_provider.py and LICENSE at MEGATRON_LM_COMMIT
#                              (the commit tests/megatron/upstream holds), for the
#                              campaign's one-GPU Megatron-LM runs.
#   MANIFEST                   what is in it, from which commit, and ldd of each file.
#
# The bundle is made from the plain build: under SANITIZE it is refused.

BUNDLE_DIR  = $(BUILD)/gpu-bundle
BUNDLE_OBJ  = $(BUILD)/bundle-obj
STATIC_DIR  = $(BUILD)/static
MULTIARCH  := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
SYSLIB      = /usr/lib/$(MULTIARCH)
MEGATRON_LM ?=
MEGATRON_LM_COMMIT ?= d98e8a64ddf34856e74b24714e3bedb2f5a39553

# the probes' files that call MPI, compiled against the one-rank MPI
ONERANK_SRC = probes/mpi.c probes/collective.c probes/dispatch.c
ONERANK_OBJ = $(ONERANK_SRC:%.c=$(BUNDLE_OBJ)/%.o)
BUNDLE_PROBE_OBJ = $(filter-out $(ONERANK_SRC:%.c=$(BUILD)/%.o),$(PROBE_LIB_OBJ)) $(ONERANK_OBJ)
STATIC_JSON = $(STATIC_DIR)/libcjson.a $(SYSLIB)/libyajl_s.a $(SYSLIB)/libyaml.a $(SYSLIB)/libz.a
STATIC_PROBE = $(SYSLIB)/openblas-pthread/libopenblas.a $(SYSLIB)/libpapi.a $(SYSLIB)/libpfm.a \
               -Wl,-Bstatic -lgfortran -lquadmath -Wl,-Bdynamic

.PHONY: gpu-bundle deps-bundle

deps-bundle:
ifneq ($(NO_DEPS),1)
	@scripts/install-deps.sh --bundle
endif

$(ONERANK_OBJ): $(BUNDLE_OBJ)/%.o: %.c probes/onerank/mpi.h
	@mkdir -p $(dir $@)
	$(CC) -Iprobes/onerank $(filter-out $(MPI_CFLAGS) -MMD -MP,$(ALL_CFLAGS)) -c $< -o $@

$(STATIC_DIR)/libcjson.a: scripts/static-cjson.sh
	CC=$(CC) scripts/static-cjson.sh $(STATIC_DIR)

$(BUNDLE_DIR)/build/megatune: $(CLI_OBJ) $(HISTORY_OBJ) $(BUILD)/libmegatune.a $(STATIC_DIR)/libcjson.a
	@mkdir -p $(dir $@)
	$(CC) $(CLI_OBJ) $(HISTORY_OBJ) $(BUILD)/libmegatune.a $(STATIC_JSON) \
		$(SYSLIB)/libsqlite3.a -ldl -lpthread -lm -o $@

$(BUNDLE_DIR)/build/megatune-probe: $(PROBE_EXE_OBJ) $(BUNDLE_PROBE_OBJ) $(BUILD)/libmegatune.a \
		$(STATIC_DIR)/libcjson.a
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_EXE_OBJ) $(BUNDLE_PROBE_OBJ) $(BUILD)/libmegatune.a $(STATIC_JSON) \
		$(STATIC_PROBE) -ldl -lpthread -lm -o $@

gpu-bundle: deps-bundle
ifneq ($(SANITIZE),)
	@echo "gpu-bundle: made from the plain build (BUILD=build), not under SANITIZE" >&2; exit 2
endif
	@$(MAKE) --no-print-directory NO_DEPS=1 all
	@$(MAKE) --no-print-directory NO_DEPS=1 $(BUNDLE_DIR)/build/megatune \
		$(BUNDLE_DIR)/build/megatune-probe
	@scripts/gpu-bundle.sh "$(BUILD)" "$(BUNDLE_DIR)" "$(MEGATRON_LM)" "$(MEGATRON_LM_COMMIT)" \
		$(CUDA_LIB) $(TRACE_LIB) $(CUDA_TEST_BIN) $(GPU_TEST_BIN)
