# SPDX-License-Identifier: MIT
"""Stand-in for torch.amp."""


class autocast:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
