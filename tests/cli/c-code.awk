# SPDX-License-Identifier: MIT
# c_code(line): the code of a line of C, for the checks that read C as text
# (tests/cli/layout.sh, banned.sh): its comments out, a /* */ one possibly
# over several lines (the global `incom` carries it to the next line: set it
# to 0 at each file's first), and its strings and characters emptied ("" and
# ''), so that what is left are the names and calls the code makes.  Put ahead
# of a program: awk "$(cat tests/cli/c-code.awk)"' { line = c_code($0) ... }'
function c_code(s,    out, i, j) {
	out = ""
	while (s != "") {
		if (incom) {
			i = index(s, "*/")
			if (!i)
				break
			s = substr(s, i + 2); incom = 0
			continue
		}
		gsub(/\x27([^\x27\\]|\\.)*\x27/, "\x27\x27", s)
		gsub(/"([^"\\]|\\.)*"/, "\"\"", s)
		i = index(s, "/*"); j = index(s, "//")
		if (j && (!i || j < i))
			return out substr(s, 1, j - 1)
		if (!i)
			return out s
		out = out substr(s, 1, i - 1) " "; s = substr(s, i + 2); incom = 1
	}
	return out
}
