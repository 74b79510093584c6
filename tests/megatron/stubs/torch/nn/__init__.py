# SPDX-License-Identifier: MIT
"""Stand-in for torch.nn: the base classes modules subclass, nothing more."""

from . import functional, init  # noqa: F401


class Module:
    def __init__(self, *args, **kwargs):
        pass


class Parameter:
    pass


class Identity(Module):
    pass


class ModuleList(Module):
    pass
