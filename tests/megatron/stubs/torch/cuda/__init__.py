# SPDX-License-Identifier: MIT
"""Stand-in for torch.cuda: one device whose compute capability the test sets
with set_capability() (tests/megatron/check_args.py --capability)."""

from . import nvtx  # noqa: F401

_capability = (9, 0)


def set_capability(major, minor):
    global _capability
    _capability = (major, minor)


class _Properties:
    def __init__(self, major, minor):
        self.major = major
        self.minor = minor
        self.name = "stand-in GPU sm_%d%d" % (major, minor)
        self.total_memory = 80 << 30
        self.multi_processor_count = 132


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return 0


def set_device(device):
    pass


def get_device_capability(device=None):
    return _capability


def get_device_properties(device=None):
    return _Properties(*_capability)


def get_device_name(device=None):
    return get_device_properties().name


def synchronize(device=None):
    pass


def empty_cache():
    pass


def is_bf16_supported(*args, **kwargs):
    return _capability >= (8, 0)


class Event:
    def __init__(self, *args, **kwargs):
        pass


class Stream:
    def __init__(self, *args, **kwargs):
        pass
