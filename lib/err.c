/* SPDX-License-Identifier: MIT */
/* err: status codes and error messages. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mt_error_set(struct mt_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int mt_error_prefix(struct mt_error *err, const char *fmt, ...)
{
	char head[MT_ERROR_MSG_MAX], old[MT_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return MT_EINVAL;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%.*s%.*s", 512, head, 511, old);
	return err->code;
}

const char *mt_strerror(int code)
{
	switch (code) {
	case MT_OK: return "success";
	case MT_ENOMEM: return "out of memory";
	case MT_EIO: return "input/output error";
	case MT_EPARSE: return "malformed input";
	case MT_EINVAL: return "invalid value";
	case MT_EUSAGE: return "bad usage";
	case MT_EINFEASIBLE: return "nothing feasible";
	case MT_EUNSUPPORTED: return "not applicable here";
	case MT_ENOLIB: return "a library is missing";
	}
	return "unknown error";
}

int mt_exit_code(int code)
{
	switch (code) {
	case MT_OK: return 0;
	case MT_EINFEASIBLE: return 1;
	case MT_EUNSUPPORTED: return 77;
	default: return 2;
	}
}
