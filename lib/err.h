/* SPDX-License-Identifier: MIT */
/* err: the one error type of megatune, and a message buffer that travels with it.
 *
 * Library code never prints and never exits.  A function that can fail takes a
 * `struct mt_error *` (which may be NULL when the caller does not want the text),
 * fills it with one line that names the file, the field and what was expected,
 * and returns a negative `enum mt_status`.  Only cli/ turns statuses into exit
 * codes (see mt_exit_code()).
 *
 *     if (mt_model_load(arg, &model, &err))
 *             return report(&err);
 */
#ifndef MT_ERR_H
#define MT_ERR_H

enum mt_status {
	MT_OK = 0,
	MT_ENOMEM = -1,       /* allocation failed */
	MT_EIO = -2,          /* cannot read or write a file */
	MT_EPARSE = -3,       /* malformed input (not JSON, truncated) */
	MT_EINVAL = -4,       /* well-formed input with a wrong or missing value */
	MT_EUSAGE = -5,       /* bad command line */
	MT_EINFEASIBLE = -6,  /* the request is valid but nothing satisfies it */
	MT_EUNSUPPORTED = -7, /* not applicable on this machine (exit 77) */
	MT_ENOLIB = -8,       /* a library the feature needs is missing on a machine where
			       * it applies, e.g. cuDNN on a machine with a GPU (exit 2) */
};

#define MT_ERROR_MSG_MAX 1024

struct mt_error {
	int code;
	char msg[MT_ERROR_MSG_MAX];
};

#define MT_ERROR_INIT { 0, { 0 } }

/* Record a message and a status; returns `code` so callers can write
 * `return mt_error_set(err, MT_EINVAL, "...")`.  `err` may be NULL. */
int mt_error_set(struct mt_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the message already in `err` with more context ("while reading X: ").
 * Returns err->code (or `MT_EINVAL` when err is NULL). */
int mt_error_prefix(struct mt_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

const char *mt_strerror(int code);

/* The documented exit code for a status: 0 ok, 1 check failed / nothing
 * feasible, 2 bad usage or input, 77 not applicable here. */
int mt_exit_code(int code);

#endif
