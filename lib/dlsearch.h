/* SPDX-License-Identifier: MIT */
/* dlsearch: find a library of the CUDA stack at run time, and say which copy was loaded.
 *
 * megatune links none of cuBLASLt, cuDNN, NCCL or CUPTI: the CUDA library of the probes
 * (build/libmegatune_cuda.so) and the tracer (build/libmegatune_trace.so) load them with
 * dlopen through this module, so that one build finds them wherever a machine has them:
 * the CUDA toolkit (/usr/local/cuda), a distribution package, or the pip wheels a PyTorch
 * installation brings (site-packages/nvidia/{cu13,cudnn,nccl,...}/lib).
 *
 * The places, in order (the first that loads and that the spec's accept() takes wins):
 *   1. a copy this process has already loaded (dlopen RTLD_NOLOAD of the soname): inside
 *      a PyTorch process the tracer thus shares torch's CUPTI;
 *   2. the file the spec's own variable names (MEGATUNE_CUPTI_PATH), when set;
 *   3. each folder of $MEGATUNE_CUDA_LIBRARY_PATH (':'-separated), when set;
 *   4. the dynamic loader's own search for the soname (LD_LIBRARY_PATH, ld.so.cache);
 *   5. and 6. the CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda, each with the
 *      spec's toolkit folders) and the Python wheels (the spec's wheel folders under every
 *      site-packages found from $VIRTUAL_ENV, $CONDA_PREFIX, each python3 on $PATH, this
 *      process when it is Python, ~/.local and the system's dist-packages); the toolkit
 *      first unless the caller asks for the wheels first (MT_DL_WHEELS_FIRST).
 *
 * Self-contained: libc and libdl only, no other megatune code, so that the two CUDA-side
 * libraries compile it in (with hidden visibility) as megatune does.  Nothing prints.
 * The copy taken is never closed (a library of the CUDA stack lives as long as the
 * process); a copy accept() refused is closed at once.
 */
#ifndef MT_DLSEARCH_H
#define MT_DLSEARCH_H

#include <stddef.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mt_dl_spec {
	const char *label;        /* for messages: "cuDNN" */
	const char *soname;       /* "libcudnn.so.9" */
	const char *path_env;     /* a variable naming the file itself, or NULL */
	const char *toolkit_dirs; /* ':'-separated, under a CUDA home: "lib64:..." */
	const char *wheel_dirs;   /* ':'-separated, under site-packages: "nvidia/cudnn/lib" */
	/* Is this copy usable (its version, its functions)?  0 yes; else nonzero with the
	 * reason in why (n bytes), and the search goes on to the next place.  NULL: any. */
	int (*accept)(void *handle, char *why, size_t n);
};

enum mt_dl_order {
	MT_DL_TOOLKIT_FIRST = 0,
	MT_DL_WHEELS_FIRST = 1,
};

#define MT_DL_PATH_MAX 1024

struct mt_dl_found {
	void *handle;               /* dlopen(RTLD_NOW | RTLD_LOCAL); owned by the process */
	char path[MT_DL_PATH_MAX];  /* the file the loader mapped */
	const char *from;           /* a static string: "already loaded", "MEGATUNE_CUPTI_PATH",
				     * "MEGATUNE_CUDA_LIBRARY_PATH", "the loader's search path",
				     * "the CUDA toolkit", "a Python wheel" */
};

/* Load the library of `spec` from the first place above that has it.  MT_OK and *found;
 * else MT_ENOLIB with `why` (n bytes; may be NULL) naming the library, every place looked
 * and, for a copy that was there but did not load, the loader's reason. */
int mt_dl_find(const struct mt_dl_spec *spec, int order, struct mt_dl_found *found, char *why,
	       size_t n);

/* The number of NVIDIA GPUs the kernel driver has bound (/proc/driver/nvidia/gpus, or the
 * folder $MEGATUNE_NVIDIA_PROC names): 0 on a machine without the driver or a GPU.  What
 * decides whether a missing GPU library is "not applicable here" (no GPU: exit 77) or an
 * error to fix (a GPU is there: exit 2). */
int mt_dl_nvidia_gpus(void);

#ifdef __cplusplus
}
#endif

#endif
