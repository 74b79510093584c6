# SPDX-License-Identifier: MIT
# The CUPTI injection library (profiler/inject.c, its record decoding and trace
# writer in profiler/inject/) and its GPU check; included by the top-level Makefile
# (which provides CC, BUILD, WARN, CFLAGS, LDFLAGS, SANITIZE).
#
#   TRACE_LIB      $(BUILD)/libmegatune_trace.so when $(CUDA_HOME)/include/cupti.h exists
#   GPU_TEST_BIN   $(BUILD)/tests/gpu-trace-check when $(CUDA_HOME)/bin/nvcc exists
#
# Both are empty otherwise, so `all: $(TRACE_LIB) $(GPU_TEST_BIN)` builds what it can.
# The library gets neither the sanitizer flags (it is loaded into foreign processes)
# nor libcuda, the driver's or the toolkit's link-only one (libcupti dlopens the
# driver itself), nor libcupti: it finds CUPTI at run time (lib/dlsearch.c, compiled in), so it needs only libc and libstdc++.
# WERROR=1 adds -Werror.

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc

TRACE_LIB    := $(if $(wildcard $(CUDA_HOME)/include/cupti.h),$(BUILD)/libmegatune_trace.so)
GPU_TEST_BIN := $(if $(wildcard $(CUDA_HOME)/bin/nvcc),$(BUILD)/tests/gpu-trace-check)

ifneq ($(TRACE_LIB),)
TRACE_SRC := profiler/inject.c profiler/inject/records.c profiler/inject/out.c lib/dlsearch.c

$(TRACE_LIB): $(TRACE_SRC) profiler/inject/records.h profiler/inject/out.h lib/dlsearch.h lib/err.h \
		profiler/inject.mk
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(if $(filter 1,$(WERROR)),-Werror) -O2 -g -fPIC -shared -fvisibility=hidden \
		-isystem $(CUDA_HOME)/include $(TRACE_SRC) -Wl,-z,defs -lstdc++ -ldl -lpthread -o $@
endif

ifneq ($(GPU_TEST_BIN),)
$(GPU_TEST_BIN): tests/gpu/trace-check.cu profiler/inject.mk
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra tests/gpu/trace-check.cu \
		-Xlinker -rpath,$(CUDA_HOME)/lib64 -cudart shared -o $@
endif
