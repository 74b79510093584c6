# SPDX-License-Identifier: MIT
"""Stand-in for torch.optim."""


class Optimizer:
    pass
