# SPDX-License-Identifier: MIT
# The CUDA backends of the probes: build/libmegatune_cuda.so (see probes/gpu.h).
CUDA_LIB      :=
CUDA_TEST_BIN :=
