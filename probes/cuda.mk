# SPDX-License-Identifier: MIT
# The CUDA backends of the probes: build/libmegatune_cuda.so (see probes/gpu.h),
# included by the top-level Makefile (which provides CC, BUILD, WARN, CFLAGS,
# CUDA_HOME, WERROR).
#
#   CUDA_LIB       $(BUILD)/libmegatune_cuda.so when $(CUDA_HOME)/bin/nvcc exists
#   CUDA_TEST_BIN  $(BUILD)/tests/ref-gemm (a plain cuBLASLt BF16 timing loop,
#                  tests/gpu/ref-gemm.cu) when nvcc exists
#
# Both are empty without nvcc.  Sources: probes/cuda/*.cu (nvcc, C++) and
# probes/cuda/*.c (the C compiler; the top-level wildcard probes/*.c does not
# reach them), plus lib/dlsearch.c (self-contained).  The library links the CUDA
# runtime statically and nothing else of CUDA: cuBLASLt, cuDNN and NCCL are found
# and loaded at run time (probes/cuda/dl.cu: the toolkit or the pip wheels), never
# libcuda (nor the toolkit's link-only one), so it needs only libc, libm and
# libstdc++, loads anywhere and answers MT_EUNSUPPORTED on machines without a driver.  -z defs keeps every
# symbol defined.  Only mt_cuda_api is exported (-fvisibility=hidden).  No
# sanitizer flags: the library is dlopened and holds no megatune code.  WERROR=1
# adds -Werror.
#
# CUDA_GENCODE: sm_80 code for A100, sm_90 code for H100/H200 plus compute_90 PTX that newer GPUs
# compile at load time.

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CUDA_GENCODE ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                -gencode arch=compute_90,code=compute_90

HAVE_NVCC     := $(wildcard $(CUDA_HOME)/bin/nvcc)
CUDA_LIB      := $(if $(HAVE_NVCC),$(BUILD)/libmegatune_cuda.so)
CUDA_TEST_BIN := $(if $(HAVE_NVCC),$(BUILD)/tests/ref-gemm)

ifneq ($(HAVE_NVCC),)
CUDA_CU_SRC  := $(sort $(wildcard probes/cuda/*.cu))
CUDA_C_SRC   := $(sort $(wildcard probes/cuda/*.c))
CUDA_HDR     := $(wildcard probes/cuda/*.h) probes/gpu.h probes/probe.h lib/err.h lib/stats.h \
                lib/dlsearch.h
CUDA_OBJ     := $(CUDA_CU_SRC:%.cu=$(BUILD)/%.cu.o) $(CUDA_C_SRC:%.c=$(BUILD)/%.c.o) \
                $(BUILD)/probes/cuda/dlsearch.c.o
CUDA_WERROR  := $(if $(filter 1,$(WERROR)),-Werror)
NVCC_WERROR  := $(if $(CUDA_WERROR),-Xcompiler -Werror -Werror all-warnings)
NVCC_FLAGS   := -std=c++17 -O2 $(CUDA_GENCODE) -isystem $(CUDA_HOME)/include \
                -Xcompiler -fPIC,-Wall,-Wextra,-fvisibility=hidden $(NVCC_WERROR)

$(BUILD)/probes/cuda/%.cu.o: probes/cuda/%.cu $(CUDA_HDR) probes/cuda.mk
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(BUILD)/probes/cuda/%.c.o: probes/cuda/%.c $(CUDA_HDR) probes/cuda.mk
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CUDA_WERROR) -O2 -g -fPIC -fvisibility=hidden \
		-isystem $(CUDA_HOME)/include -c $< -o $@

$(BUILD)/probes/cuda/dlsearch.c.o: lib/dlsearch.c lib/dlsearch.h lib/err.h probes/cuda.mk
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CUDA_WERROR) -O2 -g -fPIC -fvisibility=hidden \
		-c $< -o $@

$(CUDA_LIB): $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	$(NVCC) -shared $(CUDA_GENCODE) -cudart static $(CUDA_OBJ) -o $@ \
		-ldl -lpthread -lrt -Xlinker -z,defs

$(BUILD)/tests/ref-gemm: tests/gpu/ref-gemm.cu probes/cuda.mk
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 $(CUDA_GENCODE) -Xcompiler -Wall,-Wextra $(NVCC_WERROR) $< -o $@ \
		-L$(CUDA_HOME)/lib64 -lcublasLt -Xlinker -rpath,$(CUDA_HOME)/lib64
endif
