/* SPDX-License-Identifier: MIT */
/* banned: C library functions megatune's code does not use, because they are
 * too easy to misuse (no bound on the destination, hidden static state) and
 * make every use an audit.  Included after the system headers, it turns a
 * use into a compile error naming the function:
 *
 *     error: 'sorry_strcpy_is_a_banned_function' undeclared
 *
 * Use instead: snprintf(buf, sizeof(buf), "%s", s) or a struct sbuf
 * (lib/sbuf.h) for strcpy, strcat, strncpy, strncat, sprintf and vsprintf
 * (vsnprintf); fgets for gets; strtok_r or strcspn/strspn for strtok;
 * gmtime_r, localtime_r and strftime for gmtime, localtime, ctime and
 * asctime.  tests/banned.sh finds the uses in the sources.
 */
#ifndef MT_BANNED_H
#define MT_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef strtok
#define strtok(x, y) BANNED(strtok)

#undef sprintf
#undef vsprintf
#define sprintf(...) BANNED(sprintf)
#define vsprintf(...) BANNED(vsprintf)
#undef gets
#define gets(x) BANNED(gets)

#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef ctime_r
#define ctime_r(t, buf) BANNED(ctime_r)
#undef asctime
#define asctime(t) BANNED(asctime)
#undef asctime_r
#define asctime_r(t, buf) BANNED(asctime_r)

#endif
