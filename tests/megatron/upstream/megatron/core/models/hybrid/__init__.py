# Copyright (c) 2024-2026, NVIDIA CORPORATION. All rights reserved.
