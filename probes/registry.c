/* SPDX-License-Identifier: MIT */
/* registry: the one list of probes, in the order calibrate runs them.  Each
 * probe defines `const struct mt_probe mt_probe_<name>` in its own file
 * (probes/probe.h); a new probe is one line here. */
#include <stdio.h>
#include <string.h>

#include "probe.h"

#define MT_PROBES(X) \
	X(gemm) \
	X(attention) \
	X(collective) \
	X(dispatch) \
	X(offload) \
	X(host) \
	X(topology) \
	X(skeleton) \
	/* end of the list */

#define DECLARE(name) extern const struct mt_probe mt_probe_##name;
#define ENTRY(name) &mt_probe_##name,
MT_PROBES(DECLARE)

static const struct mt_probe *const registry[] = { MT_PROBES(ENTRY) };

const struct mt_probe *mt_probe_at(int i)
{
	return i >= 0 && i < (int)(sizeof(registry) / sizeof(registry[0])) ? registry[i] : NULL;
}

const struct mt_probe *mt_probe_find(const char *name)
{
	const struct mt_probe *p;
	int i;

	for (i = 0; (p = mt_probe_at(i)); i++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

void mt_probe_names(char *buf, size_t n, const char *sep)
{
	const struct mt_probe *p;
	size_t len = 0;
	int i;

	if (n)
		buf[0] = 0;
	for (i = 0; (p = mt_probe_at(i)); i++) {
		if (p->hidden || len >= n)
			continue;
		len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? sep : "", p->name);
	}
}
