#!/usr/bin/env python3
"""The layer check itself: it passes on the tree, and fails on a backward include added to a
copy of it, on rules that are not a stack, on a folder with no rule, on an exception no longer
needed, and on a malformed rule file."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CHECK = os.path.join(HERE, "check_layers.py")
COPIED = ("lib", "include", "capi", "kernels", "examples/tools", "layers.rules")


def run(root, *args):
    return subprocess.run([sys.executable, CHECK, "--root", root, *args],
                          capture_output=True, text=True, check=False)


class LayerCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = tempfile.mkdtemp(prefix="nubo-layers-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.temp)

    def copy_tree(self, name):
        root = os.path.join(self.temp, name)
        for part in COPIED:
            source, target = os.path.join(ROOT, part), os.path.join(root, part)
            if os.path.isdir(source):
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.csv", "*.json"))
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy(source, target)
        return root

    def append(self, root, path, text):
        with open(os.path.join(root, path), "a", encoding="utf-8") as f:
            f.write(text)

    def test_the_tree_keeps_the_rules(self):
        result = run(ROOT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("keep the layer rules", result.stdout)

    def test_a_backward_include_fails_naming_the_file_and_the_edge(self):
        root = self.copy_tree("backward")
        self.append(root, "lib/transfer/archive/archive_reader.cpp",
                    '#include "transfer/net/wire.hpp"\n')
        self.append(root, "lib/device/backend/backend_checks.cpp",
                    '#include "device/host/host_backend.hpp"\n')
        result = run(root)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("lib/transfer/archive/archive_reader.cpp:", result.stderr)
        self.assertIn("lib/transfer/archive may not include lib/transfer/net", result.stderr)
        self.assertIn("lib/device/backend may not include lib/device/host", result.stderr)
        self.assertIn("2 include(s) break the layer rules", result.stderr)

    def test_an_include_the_rules_allow_passes_in_a_copy(self):
        root = self.copy_tree("allowed")
        self.append(root, "lib/transfer/net/wire.cpp", '#include "transfer/codec/codec_table.hpp"\n')
        result = run(root)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_rules_that_are_not_a_stack_fail(self):
        root = self.copy_tree("cycle")
        with open(os.path.join(root, "layers.rules"), "a", encoding="utf-8") as f:
            f.write("lib/extra_a: lib/extra_b\nlib/extra_b: lib/extra_a\n")
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("not a stack", result.stderr)
        self.assertIn("lib/extra_a -> lib/extra_b -> lib/extra_a", result.stderr)

    def test_a_folder_without_a_rule_fails(self):
        root = self.copy_tree("unplaced")
        os.makedirs(os.path.join(root, "lib/transfer/fresh"))
        self.append(root, "lib/transfer/fresh/piece.cpp", '#include "common/log.hpp"\n')
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("its folder lib/transfer/fresh has no rule", result.stderr)

    def test_an_exception_no_longer_needed_fails(self):
        root = self.copy_tree("stale")
        with open(os.path.join(root, "layers.rules"), "a", encoding="utf-8") as f:
            f.write("allow lib/common/log.cpp -> lib/transfer\n")
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("'allow lib/common/log.cpp -> lib/transfer' is no longer needed",
                      result.stderr)

    def test_malformed_rules_are_named(self):
        for text, why in [("lib/common lib/device\n", "expected 'FOLDER: FOLDERS...'"),
                          ("lib/common:\nlib/common:\n", "has a rule already"),
                          ("lib/a: lib/nowhere\n", "lib/nowhere, which has no rule"),
                          ("  lib/common\n", "a continuation with no rule before it"),
                          ("allow lib/a.cpp lib/b\n", "expected 'allow FILE -> FOLDER'")]:
            with self.subTest(text=text):
                rules = os.path.join(self.temp, "bad.rules")
                with open(rules, "w", encoding="utf-8") as f:
                    f.write(text)
                result = run(ROOT, "--rules", rules)
                self.assertEqual(result.returncode, 2)
                self.assertIn(why, result.stderr)


if __name__ == "__main__":
    unittest.main()
