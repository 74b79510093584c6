# SPDX-License-Identifier: MIT
"""A stand-in for Hydra's override parser (hydra-core 1.3,
hydra/core/override_parser/overrides_parser.py and the grammar
hydra/grammar/OverrideParser.g4 / OverrideLexer.g4), for the forms that
Megatron-Bridge overrides use:

    override: key EQUAL value?                  (OverrideParser.g4 `override`)
    key:      ID (DOT ID)*                      (`packageOrGroup`, no @package)
    value:    element
    element:  primitive | dictContainer | listContainer
    dictContainer: BRACE_OPEN (dictKeyValuePair (COMMA dictKeyValuePair)*)? BRACE_CLOSE
    dictKeyValuePair: dictKey COLON element
    listContainer: BRACKET_OPEN (element (COMMA element)*)? BRACKET_CLOSE
    primitive: QUOTED_VALUE | unquoted text, converted as Hydra's visitor
        (OverrideVisitor.visitPrimitive) does: `null` (any case) -> None,
        `true`/`false` (any case) -> bool, INT -> int, FLOAT (with inf/nan)
        -> float, anything else -> str with surrounding whitespace stripped.

Sweeps, functions, interpolations and the +, ++ and ~ prefixes are not
accepted: an override using them raises OverrideParseException.
"""

import re

INT = re.compile(r"^[+-]?(0|[1-9][0-9_]*)$")
FLOAT = re.compile(r"^[+-]?(([0-9_]+\.[0-9_]*|\.[0-9_]+)([eE][+-]?[0-9_]+)?|[0-9_]+[eE][+-]?[0-9_]+|inf|nan)$", re.I)
KEY = re.compile(r"^[A-Za-z_$\-][\w$\-]*(\.[A-Za-z_$\-][\w$\-]*)*$")


class OverrideParseException(Exception):
    pass


class Override:
    def __init__(self, key, value, input_line):
        self.key_or_group = key
        self._value = value
        self.input_line = input_line
        self.package = None

    def value(self):
        return self._value

    def is_delete(self):
        return False

    def is_add(self):
        return False

    def is_force_add(self):
        return False

    def get_key_element(self):
        return self.key_or_group


class _Reader:
    def __init__(self, text, line):
        self.s, self.i, self.line = text, 0, line

    def fail(self, what):
        raise OverrideParseException("Error parsing override '%s'\n%s at position %d" % (self.line, what, self.i))

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def element(self, stops):
        self.ws()
        c = self.s[self.i : self.i + 1]
        if c == "{":
            return self.container("{", "}")
        if c == "[":
            return self.container("[", "]")
        if c in ("'", '"'):
            j = self.s.find(c, self.i + 1)
            if j < 0:
                self.fail("unterminated quoted value")
            v = self.s[self.i + 1 : j]
            self.i = j + 1
            self.ws()
            return v
        j = self.i
        while j < len(self.s) and self.s[j] not in stops:
            if self.s[j] in "{}[]'\"" or self.s.startswith("${", j):
                self.fail("unsupported character %r" % self.s[j])
            j += 1
        text, self.i = self.s[self.i : j].strip(), j
        return primitive(text)

    def container(self, open_, close):
        self.i += 1
        out = {} if open_ == "{" else []
        self.ws()
        if self.s[self.i : self.i + 1] == close:
            self.i += 1
            return out
        while True:
            if open_ == "{":
                self.ws()
                m = re.match(r"[\w$\-./]+", self.s[self.i :])
                if not m:
                    self.fail("expected a dictionary key")
                key = m.group(0)
                self.i += len(key)
                self.ws()
                if self.s[self.i : self.i + 1] != ":":
                    self.fail("expected ':'")
                self.i += 1
                out[key] = self.element(",}")
            else:
                out.append(self.element(",]"))
            self.ws()
            c = self.s[self.i : self.i + 1]
            self.i += 1
            if c == close:
                return out
            if c != ",":
                self.fail("expected ',' or %r" % close)


def primitive(text):
    low = text.lower()
    if low == "null":
        return None
    if low in ("true", "false"):
        return low == "true"
    if INT.match(text):
        return int(text.replace("_", ""))
    if FLOAT.match(text):
        return float(text.replace("_", ""))
    return text


class OverridesParser:
    @classmethod
    def create(cls, config_loader=None):
        return cls()

    def parse_override(self, line):
        key, eq, rest = line.partition("=")
        if not eq or not KEY.match(key):
            raise OverrideParseException("Error parsing override '%s'\nunsupported override form" % line)
        if rest.strip() == "":
            return Override(key, "", line)
        r = _Reader(rest, line)
        value = r.element("")
        r.ws()
        if r.i != len(rest):
            r.fail("unexpected text after the value")
        return Override(key, value, line)

    def parse_overrides(self, overrides):
        return [self.parse_override(o) for o in overrides]
