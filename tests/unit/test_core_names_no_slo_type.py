"""The core never names an SLO type: it asks the registered type what it can do.

Why: a core that special-cases one SLO (the lag trend) makes that SLO a built-in in
all but name: a use case fails without its plugin, and a third party's trend SLO gets
no analysis, no CLI threshold and no plots. The capabilities live on
``bench.api.SloType`` (``decide_early``, ``cli_threshold``, ``analysed_as_trend``,
``series_label``). Checked are the core's code tokens, identifiers and string literals;
docstrings and comments may describe the method's main SLO in words.

Allowed, each as data a use case's default Benchmark names:

* ``api.py``: ``DEFAULT_SLO``, the SLO a use case's default Benchmark holds unless it
  names others (the reference's default, so a plain ``bench run`` measures as it does).
* ``builtin/calibrated.py``: ``TREND_SLO``, the same SLO written with the built-in
  ``generic`` type; its name stays as the reference's analysis notebooks find lag
  series by it in the result file names.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core" / "bench"
NAME = re.compile(r"lag[ _-]?trend", re.I)
#: the token types of code: identifiers and string literals (f-string parts on 3.12+)
CODE = (tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING))

#: file -> how many code tokens may name the SLO type there (see the module docstring)
ALLOWED = {"api.py": 2, "builtin/calibrated.py": 1}


def named(source: str) -> int:
    """Identifiers and string literals (docstrings excluded) that name the SLO type."""
    count = 0
    previous = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        is_docstring = tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT,
                                                                   tokenize.DEDENT, tokenize.NL)
        if tok.type in CODE and not is_docstring:
            count += bool(NAME.search(tok.string))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
    return count


def test_the_core_names_no_slo_type_outside_its_data_defaults() -> None:
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE).as_posix()
        n = named(path.read_text(encoding="utf-8"))
        if n > ALLOWED.get(rel, 0):
            found[rel] = n
    assert found == {}


def test_the_check_sees_names_and_strings_but_not_docstrings_or_comments() -> None:
    code = '"""The lag trend."""\n# lag-trend\nx = {"sloType": "lag-trend"}\nLAG_TREND = 1\n\n\ndef f():\n' \
           '    """lag_trend"""\n    return f"{x} Lag-trend"\n'
    assert named(code) == 3
