# SPDX-License-Identifier: MIT
"""Stand-in for torch.autograd."""


class Function:
    pass


class profiler:
    class emit_nvtx:
        def __init__(self, *args, **kwargs):
            pass
