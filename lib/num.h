/* SPDX-License-Identifier: MIT */
/* num: the one reader of decimal numbers from text (options, rule files,
 * logs).  strtod() alone accepts "nan", "inf", "infinity", hexadecimal floats
 * and turns "1e400" into infinity: a NaN then passes every range check
 * (NaN < 0 and NaN >= 90 are both false).  mt_parse_num() refuses them. */
#ifndef MT_NUM_H
#define MT_NUM_H

/* The whole of `s` as a finite decimal number (leading and trailing spaces
 * refused): 0 with *out set, or -1 ("", "nan", "inf", "0x10", "1e400",
 * "12abc"). An underflow to zero ("1e-400") is refused too. */
int mt_parse_num(const char *s, double *out);

/* mt_parse_num() and lo <= value <= hi. */
int mt_parse_num_range(const char *s, double lo, double hi, double *out);

/* The whole of `s` as a decimal integer ([-]digits: no sign '+', no spaces,
 * no hexadecimal or octal prefix, no fraction or exponent) with
 * lo <= value <= hi and |value| <= 2^53: 0 with *out set, or -1. */
int mt_parse_int(const char *s, long long lo, long long hi, long long *out);

/* on|true|1 -> 1, off|false|0 -> 0, anything else -1: the one reader of
 * a switch (options, knobs). */
int mt_parse_onoff(const char *s);

#endif
