/* SPDX-License-Identifier: MIT */
/* version: the one place that states megatune's version. */
#ifndef MT_VERSION_H
#define MT_VERSION_H

#define MEGATUNE_VERSION "0.1.0"

#endif
