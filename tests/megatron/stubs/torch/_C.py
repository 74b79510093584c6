# SPDX-License-Identifier: MIT
"""Stand-in for torch._C: the names Megatron uses in annotations."""

import types

from .distributed import ProcessGroup

_distributed_c10d = types.SimpleNamespace(ProcessGroup=ProcessGroup)
