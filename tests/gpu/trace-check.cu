// SPDX-License-Identifier: MIT
//
// gpu-trace-check: a CUDA workload whose kernels, copies and sets are known, for
// tests/gpu/trace-check.sh to compare with what libmegatune_trace.so records.
//
// It launches a "gate" kernel (100 ms) and, while the gate holds the GPU, queues
// 3 kernels x 20 launches (busy<1>, busy<2>, busy<3>: spin 200, 400, 800 us on
// %globaltimer), each bracketed by its own pair of CUDA events, so that the GPU runs
// them back to back without waiting for the host. Then 2 pageable copies (HtoD,
// DtoH), 1 pinned asynchronous copy (HtoD) and 1 memset. An NVTX range
// "trace-check" spans the whole run (recorded only when NVTX_INJECTION64_PATH is set).
//
// Prints one JSON line with its own measurements:
//   {"kernels":{"gate":{"count":1,"ms":100.01},"busy<1>":{"count":20,"ms":4.0},...},
//    "memcpy":3,"memset":1}
// A kernel key is a substring of the kernel's demangled name (void busy<1>(long long,
// int*)). Exit 0; 77 when no GPU is usable (message on stderr); 1 on a CUDA error.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                          \
	do {                                                                                 \
		cudaError_t err_ = (call);                                                   \
		if (err_ != cudaSuccess) {                                                   \
			fprintf(stderr, "gpu-trace-check: %s: %s\n", #call,                  \
				cudaGetErrorString(err_));                                   \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

__device__ __forceinline__ unsigned long long now_ns()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ int spin(long long ns)
{
	unsigned long long end = now_ns() + (unsigned long long)ns;
	int n = 0;
	while (now_ns() < end)
		n++;
	return n;
}

extern "C" __global__ void gate(long long ns, int *out)
{
	int n = spin(ns);
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] = n;
}

template <int K> __global__ void busy(long long ns, int *out)
{
	int n = spin(ns);
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[K] = n;
}

static const int LAUNCHES = 20;
static const long long GATE_NS = 100000000LL; // 100 ms
static const long long BUSY_NS[3] = {200000LL, 400000LL, 800000LL};
static const char *const NAMES[4] = {"gate", "busy<1>", "busy<2>", "busy<3>"};

static void launch(int which, long long ns, int *dev)
{
	switch (which) {
	case 0: gate<<<1, 32>>>(ns, dev); break;
	case 1: busy<1><<<2, 64>>>(ns, dev); break;
	case 2: busy<2><<<2, 64>>>(ns, dev); break;
	default: busy<3><<<2, 64>>>(ns, dev); break;
	}
	CHECK(cudaGetLastError());
}

int main()
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		fprintf(stderr, "gpu-trace-check: no usable GPU: %s\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		return 77;
	}
	CHECK(cudaSetDevice(0));
	nvtxRangePushA("trace-check");

	int *dev = nullptr;
	CHECK(cudaMalloc(&dev, 16 * sizeof(int)));
	const int total = 1 + 3 * LAUNCHES;
	cudaEvent_t ev[2 * total];
	for (int i = 0; i < 2 * total; i++)
		CHECK(cudaEventCreate(&ev[i]));
	int kind[total];

	// the gate first; the timed launches queue up behind it
	int k = 0;
	CHECK(cudaEventRecord(ev[0]));
	launch(0, GATE_NS, dev);
	CHECK(cudaEventRecord(ev[1]));
	kind[k++] = 0;
	for (int i = 0; i < LAUNCHES; i++)
		for (int w = 1; w <= 3; w++) {
			CHECK(cudaEventRecord(ev[2 * k]));
			launch(w, BUSY_NS[w - 1], dev);
			CHECK(cudaEventRecord(ev[2 * k + 1]));
			kind[k++] = w;
		}
	CHECK(cudaDeviceSynchronize());

	int counts[4] = {0, 0, 0, 0};
	double ms[4] = {0, 0, 0, 0};
	for (int i = 0; i < total; i++) {
		float t = 0;
		CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
		counts[kind[i]]++;
		ms[kind[i]] += t;
	}

	// copies and a set
	const size_t bytes = (size_t)1 << 20;
	char *host = (char *)malloc(bytes), *pinned = nullptr, *buf = nullptr;
	if (host == nullptr) {
		fprintf(stderr, "gpu-trace-check: out of memory\n");
		return 1;
	}
	memset(host, 1, bytes);
	CHECK(cudaMallocHost(&pinned, bytes));
	memset(pinned, 2, bytes);
	CHECK(cudaMalloc(&buf, bytes));
	CHECK(cudaMemcpy(buf, host, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(buf, 0, bytes));
	CHECK(cudaMemcpy(host, buf, bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpyAsync(buf, pinned, bytes, cudaMemcpyHostToDevice, 0));
	CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	printf("{\"kernels\":{");
	for (int w = 0; w < 4; w++)
		printf("%s\"%s\":{\"count\":%d,\"ms\":%.6f}", w ? "," : "", NAMES[w], counts[w], ms[w]);
	printf("},\"memcpy\":3,\"memset\":1}\n");

	for (int i = 0; i < 2 * total; i++)
		CHECK(cudaEventDestroy(ev[i]));
	CHECK(cudaFree(buf));
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(pinned));
	free(host);
	return 0;
}
