#!/usr/bin/env python3
"""Checks that the code's folders include only what the layer rules allow.

The rules (layers.rules at the repository root) list, for every folder that holds code, the
folders it may include; a folder may always include itself and the public headers
(include/nubo). The rules must form a stack: no folder may reach itself back through them, so a
backward edge cannot be allowed by writing both directions down. Includes are resolved as the
build resolves them: beside the including file, then lib/, include/, capi/ and
kernels/contract/. Those that resolve to nothing in the tree (system and third-party headers)
are not edges.

  check_layers.py [--root DIR] [--rules FILE]

Exits 0 when the tree keeps the rules, 1 naming each file whose include breaks them (or a
folder the rules do not place, or a cycle in the rules), 2 on a malformed rule file.
"""
import argparse
import os
import re
import sys

SCANNED = ("lib", "capi/src", "examples/tools", "kernels")
SEARCH = ("lib", "include", "capi", "kernels/contract")
EXTENSIONS = (".cpp", ".hpp", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
PUBLIC = "include/nubo"


class Rules:
    def __init__(self):
        self.deps = {}  # folder -> the folders it may include
        self.part_of = {}  # folder -> the folder whose layer it belongs to
        self.allowed = set()  # (file, folder): the exceptions still to remove

    def layer(self, folder):
        return self.part_of.get(folder, folder)


def read_rules(path):
    """Parses the rule file; ValueError naming the line when it is malformed."""
    rules = Rules()
    lines = []  # (number, text), continuation lines (indented) joined to the rule they follow
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].rstrip()
            if not text.strip():
                continue
            if text[0].isspace():
                if not lines:
                    raise ValueError(f"{path}:{number}: a continuation with no rule before it")
                lines[-1] = (lines[-1][0], lines[-1][1] + " " + text.strip())
            else:
                lines.append((number, text))
    for number, text in lines:
        words = text.split()
        if words[0] == "allow":
            if len(words) != 4 or words[2] != "->":
                raise ValueError(f"{path}:{number}: expected 'allow FILE -> FOLDER'")
            rules.allowed.add((words[1], words[3]))
        elif len(words) == 3 and words[1] == "=":
            rules.part_of[words[0]] = words[2]
        elif words[0].endswith(":") and len(words[0]) > 1:
            folder = words[0][:-1]
            if folder in rules.deps:
                raise ValueError(f"{path}:{number}: {folder} has a rule already")
            rules.deps[folder] = set(words[1:])
        else:
            raise ValueError(f"{path}:{number}: expected 'FOLDER: FOLDERS...', "
                             "'FOLDER = PARENT' or 'allow FILE -> FOLDER'")
    for folder, parent in rules.part_of.items():
        if parent not in rules.deps or folder in rules.deps:
            raise ValueError(f"{path}: {folder} = {parent}: the parent needs a rule, the folder none")
    for folder, deps in rules.deps.items():
        for dep in deps:
            if dep not in rules.deps and dep != PUBLIC:
                raise ValueError(f"{path}: {folder} may include {dep}, which has no rule")
    for _, folder in rules.allowed:
        if folder not in rules.deps:
            raise ValueError(f"{path}: an exception names {folder}, which has no rule")
    return rules


def cycle_in(deps):
    """A list of folders that reach themselves back through the rules, or None."""
    rules = deps
    state = {}

    def visit(folder, trail):
        state[folder] = "open"
        for dep in sorted(rules.get(folder, ())):
            if state.get(dep) == "open":
                return trail[trail.index(dep):] + [dep] if dep in trail else [folder, dep]
            if dep not in state:
                found = visit(dep, trail + [dep])
                if found:
                    return found
        state[folder] = "done"
        return None

    for folder in sorted(rules):
        if folder not in state:
            found = visit(folder, [folder])
            if found:
                return found
    return None


def code_files(root):
    for top in SCANNED:
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(directory, name), root)


def resolve(root, including, target):
    for base in [os.path.dirname(including)] + list(SEARCH):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def folder_of(path):
    folder = os.path.dirname(path)
    return PUBLIC if folder.startswith(PUBLIC) else folder


def check(root, rules):
    """The includes that break the rules, and the exceptions that are no longer needed."""
    problems = []
    used = set()
    for path in code_files(root):
        here = rules.layer(folder_of(path))
        if here not in rules.deps:
            problems.append(f"{path}: its folder {folder_of(path)} has no rule in layers.rules")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(root, path, match.group(1))
                if target is None:
                    continue
                there = rules.layer(folder_of(target))
                if there in (here, PUBLIC) or there in rules.deps[here]:
                    continue
                if (path, there) in rules.allowed:
                    used.add((path, there))
                    continue
                problems.append(f"{path}:{number}: includes {target}, but {here} may not "
                                f"include {there} (layers.rules)")
    for path, folder in sorted(rules.allowed - used):
        problems.append(f"layers.rules: the exception 'allow {path} -> {folder}' is no longer "
                        "needed: remove it")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--rules")
    args = parser.parse_args()
    rules_path = args.rules or os.path.join(args.root, "layers.rules")
    try:
        rules = read_rules(rules_path)
    except (OSError, ValueError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    cycle = cycle_in(rules.deps)
    if cycle:
        print("check_layers: the rules are not a stack: " + " -> ".join(cycle), file=sys.stderr)
        return 1
    problems = check(args.root, rules)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) break the layer rules", file=sys.stderr)
        return 1
    print(f"check_layers: {len(rules.deps) + len(rules.part_of)} folders keep the layer rules"
          + (f", with {len(rules.allowed)} exception(s) still to remove" if rules.allowed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
