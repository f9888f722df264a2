"""display.py: a quantity knows its unit; 4 significant digits; never an exponent or a float's repr."""
from __future__ import annotations

import pytest

from kernel_profiler.critic import quantities
from kernel_profiler.display import ellipsize, fraction, number, quantity, times


@pytest.mark.parametrize("value,unit,text", [
    (47690759.0, "ns", "47.69 ms"),
    (1709856.0, "ns", "1.71 ms"),
    (262790.87492258556, "ns", "262.8 µs"),
    (640.0, "ns", "640 ns"),
    (3.2e9, "ns", "3.2 s"),
    (1264542208.0, "byte", "1.265 GB"),
    (545259856.0, "byte", "545.3 MB"),
    (2048.0, "byte", "2.048 KB"),
    (4811971528206.663, "byte/s", "4.812 TB/s"),
    (739560646042.7076, "byte/s", "739.6 GB/s"),
    (67006985495854.62, "flop/s", "67.01 TFLOP/s"),
    (137438953472.0, "flop", "137.4 GFLOP"),
    (1.98e9, "hz", "1.98 GHz"),
    (36.33810663678693, "%", "36.3%"),
    (0.0121, "%", "0.0121%"),
    (0.994, "ratio", "99.4%"),
    (6.506527292866235, "ratio", "6.51x"),
    (4.0, "byte/sector", "4 bytes/sector"),
    (32.0, "sector/request", "32 sectors/request"),
    (1.0, "instruction", "1 instruction"),
    (1.0, "instructions", "1 instruction"),
    (1.0, "sectors/request", "1 sector/request"),
    (63.0, "instructions", "63 instructions"),
    (965226034.0, "sector", "965,226,034 sectors"),
    (64.43834333931785, "cycles/issue", "64.44 cycles/issue"),
    (10570000.0, "count", "10,570,000"),
    (float("nan"), "ns", "n/a"),
])
def test_quantity(value, unit, text):
    assert quantity(value, unit) == text


def test_no_exponent_or_long_float_anywhere():
    for v in (4.769e7, 9.603e5, 1.057e7, 1e-7, 123456789.123, 0.000123456):
        for unit in ("", "count", "inst", "ns", "byte", "%", "ratio"):
            s = quantity(v, unit)
            assert "e+" not in s and "e-" not in s, s
            digits = [c for c in s.split()[0] if c.isdigit()]
            assert len(digits) <= 12, s


@pytest.mark.parametrize("value,unit", [(1709856.0, "ns"), (545259856.0, "byte"), (4811971528206.663, "byte/s"),
                                        (67006985495854.62, "flop/s"), (36.33810663678693, "%"), (6.5065, "ratio")])
def test_displayed_quantity_is_read_back_within_its_precision(value, unit):
    """What we print, the critic reads back to the same value (a reader can check it against the capture)."""
    (q,) = quantities(f"it is {quantity(value, unit)} here")
    base = value if unit != "%" else value
    assert abs(q.value - base) <= max(q.tol, 0.0005 * abs(base)) or (q.alt and abs(q.alt - base) <= q.tol), (q, base)


def test_number_and_multiples():
    assert number(0) == "0" and number(1234567.8) == "1,234,568" and number(0.1234567) == "0.1235"
    assert times(370.29) == "370x" and times(1.2012) == "1.2x" and times(15.0896) == "15.1x"
    assert fraction(0.3633810663678693) == "36.3%" and fraction(1.0) == "100%" and fraction(0.0) == "0%"


def test_ellipsize_never_cuts_silently():
    assert ellipsize("abcdefghij", 5) == "ab…ij" and ellipsize("abc", 5) == "abc"
