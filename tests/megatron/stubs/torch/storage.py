# SPDX-License-Identifier: MIT
"""Stand-in for torch.storage."""
