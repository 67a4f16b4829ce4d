"""Writes the README's code block that starts with `include_line` as a program: the block's
lines after the include, inside main(). The README's entry-point snippets are built and run by
the tests this way, so that they stay true to the API and print something on any machine.

    readme_snippet.py README.md '#include <nubo/nubo.hpp>' out.cpp
"""

import sys


def main() -> None:
    readme, include_line, out = sys.argv[1:4]
    lines = open(readme, encoding="utf-8").read().split("\n")
    try:
        start = lines.index(include_line)
    except ValueError:
        sys.exit(f"readme_snippet: no line '{include_line}' in {readme}")
    body = []
    for line in lines[start + 1:]:
        if line.startswith("```"):
            break
        body.append(line)
    c = out.endswith(".c")
    head = [include_line, "#include <stdio.h>" if c else "#include <iostream>", "",
            "int main(void) {" if c else "int main() {"]
    program = head + ["  " + line if line else "" for line in body] + ["  return 0;", "}", ""]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(program))


if __name__ == "__main__":
    main()
