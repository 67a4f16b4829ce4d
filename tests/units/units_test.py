#!/usr/bin/env python3
"""Every case of cases.tsv through Python, which reaches the C ABI (nubo_units.h): the same
answers as C++ (units_test.cpp) and the command lines. Run with PYTHONPATH=capi/python and
NUBO_LIBRARY=<build>/libnubo_c.so."""
import math
import unittest
from pathlib import Path

from nubo import cost, units
from nubo.errors import NuboError, Status

CASES = Path(__file__).with_name("cases.tsv")
PARSERS = {"bytes": units.parse_bytes, "rate": units.parse_rate,
           "duration": units.parse_duration}


def cases():
    for line in CASES.read_text().splitlines():
        if line and not line.startswith("#"):
            fields = line.split("\t")
            yield fields[0], fields[1], fields[2], fields[3] if len(fields) > 3 else ""


class Units(unittest.TestCase):
    def test_every_case_reads_as_the_table_says(self) -> None:
        count = 0
        for kind, text, expected, message in cases():
            count += 1
            with self.subTest(kind=kind, text=text):
                if expected == "error":
                    with self.assertRaises(NuboError) as e:
                        PARSERS[kind](text, "--flag")
                    self.assertEqual(e.exception.status, Status.INVALID_ARGUMENT)
                    self.assertIsInstance(e.exception, ValueError)
                    self.assertIn(message, str(e.exception))
                    self.assertIn("--flag", str(e.exception))
                else:
                    self.assertTrue(math.isclose(PARSERS[kind](text, "--flag"), float(expected),
                                                 rel_tol=1e-12))
        self.assertGreater(count, 50)

    def test_one_dtype_read_by_the_library_for_buffers_and_costs(self) -> None:
        D = units.DType
        for text, expected in [("f32", D.F32), ("FP32", D.F32), ("float32", D.F32),
                               ("half", D.F16), ("fp16", D.F16), ("bfloat16", D.BF16),
                               ("tf32", D.TF32), ("int32", D.I32), ("i64", D.I64)]:
            self.assertIs(units.parse_dtype(text), expected, text)
        self.assertEqual([str(d) for d in D], ["f32", "f16", "bf16", "i32", "i64", "tf32"])
        for bad in ["", "int8", "f 32"]:
            with self.subTest(bad=bad), self.assertRaises(NuboError) as e:
                units.parse_dtype(bad)
            self.assertIn(f"unknown dtype '{bad}'", str(e.exception))
        self.assertIs(cost.DType, units.DType)

    def test_formatting_and_cost_durations_share_the_library(self) -> None:
        self.assertEqual(units.format_bytes(80 * 2**30), "80.0 GiB")
        self.assertEqual(units.format_bytes(1.5 * 2**20, 2), "1.50 MiB")
        self.assertEqual(units.format_duration(1800), "30 min")
        self.assertEqual(cost.seconds("1h30m"), 5400)
        self.assertEqual(cost.seconds(90), 90)
        for bad in (float("nan"), float("inf"), -1):
            with self.assertRaises(NuboError):
                cost.seconds(bad)
        with self.assertRaises(TypeError):
            units.parse_bytes(4096)  # type: ignore[arg-type]
        with self.assertRaises(NuboError):
            units.format_bytes(1, 9)


if __name__ == "__main__":
    unittest.main()
