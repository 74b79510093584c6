#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The examples of README.md and docs/*.md show what the program prints now.

An example is a command of `build/megatune` with the output under it: either a
```sh block holding that one command followed at once by a plain ``` block
(its output), or a plain block whose first line is `$ build/megatune ...` (with
`\\` continuation lines) and whose next lines are its output.  The command is
run (files it names that are not in the working folder are found by name
under tests/fixtures/), and every shown line must appear in the output, in
order: a line ending in "..." matches any line it begins, a line that is only
"..." stands for lines left out, and timings ("in 0.00 s") may differ.

Usage: check_examples.py MEGATUNE FILE.md...   (prints ok/not ok per example)
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def blocks(text):
    """(info, lines) of each fenced block, in order."""
    out, cur, info = [], None, None
    for line in text.split("\n"):
        if line.startswith("```"):
            if cur is None:
                cur, info = [], line[3:].strip()
            else:
                out.append((info, cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return out


def examples(path):
    bs = blocks(open(path, encoding="utf-8").read())
    for i, (info, lines) in enumerate(bs):
        if info == "sh" and i + 1 < len(bs) and bs[i + 1][0] == "":
            cmd = [ln for ln in lines if ln.strip()]
            if len(cmd) == 1 and cmd[0].startswith("build/megatune ") and "#" not in cmd[0]:
                yield cmd[0], bs[i + 1][1]
        elif info == "" and lines and lines[0].startswith("$ build/megatune "):
            cmd, k = lines[0][2:], 1
            while cmd.endswith("\\") and k < len(lines):
                cmd = cmd[:-1] + " " + lines[k].strip()
                k += 1
            yield cmd, lines[k:]


def norm(s):
    return re.sub(r"in [0-9.]+ s\b", "in X s", s.rstrip())


def matches(shown, got):
    """Every shown line in order in got; returns the first shown line missing."""
    j = 0
    for line in shown:
        want = norm(line)
        if not want.strip() or want.strip() == "...":
            continue
        prefix = want.endswith("...")
        if prefix:
            want = want[:-3].rstrip()
        while j < len(got):
            g = norm(got[j])
            j += 1
            if (g.startswith(want) if prefix else g == want):
                break
        else:
            return line
    return None


def fixtures():
    found = {}
    for root, _, files in os.walk("tests/fixtures"):
        for f in files:
            found.setdefault(f, os.path.join(root, f))
    return found


def main():
    exe = os.path.abspath(sys.argv[1])
    fx = fixtures()
    fail = n = 0
    for path in sys.argv[2:]:
        for cmd, shown in examples(path):
            n += 1
            args = shlex.split(cmd)[1:]
            with tempfile.TemporaryDirectory() as tmp:
                for a in args:
                    if not os.path.exists(a) and a in fx:
                        os.symlink(os.path.abspath(fx[a]), os.path.join(tmp, a))
                os.symlink(os.path.abspath("tests"), os.path.join(tmp, "tests"))
                r = subprocess.run([exe] + args, cwd=tmp, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=120)
            miss = matches(shown, r.stdout.split("\n"))
            name = "%s: %s" % (path, cmd if len(cmd) < 90 else cmd[:87] + "...")
            if miss is None:
                print("ok - " + name)
            else:
                fail += 1
                print("not ok - " + name)
                print("#   shown but not printed (in this order): " + miss.strip())
    if n == 0:
        print("not ok - no example found")
        fail = 1
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
