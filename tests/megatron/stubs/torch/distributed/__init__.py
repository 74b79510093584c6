# SPDX-License-Identifier: MIT
"""Stand-in for torch.distributed: available, never initialised."""


class ProcessGroup:
    pass


class ProcessGroupNCCL:
    class Options:
        pass


class ReduceOp:
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    AVG = "avg"


def is_available():
    return True


def is_initialized():
    return False


def _not_initialized(*args, **kwargs):
    raise RuntimeError("Default process group has not been initialized")


get_rank = get_world_size = barrier = broadcast = all_reduce = all_gather = _not_initialized
all_gather_into_tensor = reduce_scatter_tensor = _not_initialized
batch_isend_irecv = destroy_process_group = _not_initialized
new_group = get_process_group_ranks = get_backend = gather_object = _not_initialized
