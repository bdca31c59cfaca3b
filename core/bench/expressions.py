"""The threshold expressions of ``thresholdFromExpression``: arithmetic over L (the load
value) and R (the resource value), as the reference's SLOs take them.

A module of its own because an expression comes from a file a user wrote: it is parsed
without ``eval`` into a small tree, within limits of length and nesting (400 nested
parentheses were a RecursionError, ``10^400`` an OverflowError), and every step of its
evaluation is checked for a finite real value, so that a bad expression is one line
naming it and, for the whole grid of an execution (:func:`check_expression`), the load
and resource value where it fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

#: limits of a threshold expression: it is a formula over L and R, not a program, and each
#: limit keeps a hostile or mistyped one from exhausting the parser's stack or the floats
MAX_EXPRESSION_CHARS = 500
MAX_EXPRESSION_DEPTH = 32
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([LR])|(.))", re.DOTALL)

#: a parsed expression: a number, "L", "R", ("neg", x) or (operator, left, right)
Node = float | str | tuple[Any, ...]


class ExpressionError(ValueError):
    """A threshold expression that cannot be parsed, or has no finite value somewhere."""


def _shown(text: str) -> str:
    """The expression as an error line shows it: one line, at most 60 characters."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _tokens(text: str) -> list[str | float]:
    out: list[str | float] = []
    for number_text, variable, other in _TOKEN.findall(text):
        if number_text:
            value = float(number_text)
            if not math.isfinite(value):
                raise ExpressionError(f"thresholdFromExpression: {_shown(text)}: the number {number_text[:20]}... "
                                      "is too large")
            out.append(value)
        elif variable:
            out.append(variable)
        elif other.strip():
            if other not in "+-*/^%()":
                raise ExpressionError(f"thresholdFromExpression: {_shown(text)}: unexpected {other!r} "
                                      "(numbers, L, R, + - * / % ^ and parentheses only)")
            out.append(other)
    return out


def parse_expression(text: str) -> Node:
    """An arithmetic expression over L (load value) and R (resource value), parsed without
    eval into a small tree that :func:`evaluate_expression` evaluates for any L and R.

    Precedence as in the reference's expression library: ``^`` (right-associative) over
    unary minus over ``* / %`` over ``+ -``; a number directly before L, R or ``(``
    multiplies (``2L``). At most :data:`MAX_EXPRESSION_CHARS` characters and
    :data:`MAX_EXPRESSION_DEPTH` levels of parentheses, signs and powers, so that 400
    nested parentheses are one line, not a RecursionError.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"thresholdFromExpression: {text!r} is not text")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"thresholdFromExpression: {_shown(text)} is too long ({len(text)} characters, at "
                              f"most {MAX_EXPRESSION_CHARS})")
    tokens = _tokens(text)
    if not tokens:
        raise ExpressionError("thresholdFromExpression: empty expression")
    pos = 0
    depth = 0

    def peek() -> str | float | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str | float:
        nonlocal pos
        if pos >= len(tokens):
            raise ExpressionError(f"thresholdFromExpression: {_shown(text)} ends too early")
        pos += 1
        return tokens[pos - 1]

    def deeper() -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_EXPRESSION_DEPTH:
            raise ExpressionError(f"thresholdFromExpression: {_shown(text)} is nested more than "
                                  f"{MAX_EXPRESSION_DEPTH} levels deep (parentheses, signs and powers)")

    def atom() -> Node:
        nonlocal depth
        token = take()
        if isinstance(token, float):
            if peek() in ("L", "R", "("):
                return ("*", token, power())
            return token
        if token in ("L", "R"):
            return token
        if token == "(":
            deeper()
            value = additive()
            if take() != ")":
                raise ExpressionError(f"thresholdFromExpression: {_shown(text)}: missing ')'")
            depth -= 1
            return value
        raise ExpressionError(f"thresholdFromExpression: {_shown(text)}: unexpected {token!r}")

    def power() -> Node:
        nonlocal depth
        base = atom()
        if peek() == "^":
            take()
            deeper()
            exponent = unary()
            depth -= 1
            return ("^", base, exponent)
        return base

    def unary() -> Node:
        nonlocal depth
        if peek() in ("-", "+"):
            negative = take() == "-"
            deeper()
            value = unary()
            depth -= 1
            return ("neg", value) if negative else value
        return power()

    def multiplicative() -> Node:
        value = unary()
        while peek() in ("*", "/", "%"):
            op = take()
            value = (op, value, unary())
        return value

    def additive() -> Node:
        value = multiplicative()
        while peek() in ("+", "-"):
            op = take()
            value = (op, value, multiplicative())
        return value

    tree = additive()
    if pos != len(tokens):
        raise ExpressionError(f"thresholdFromExpression: {_shown(text)}: unexpected {tokens[pos]!r}")
    return tree


def _evaluate(tree: Node, load: float, resources: float) -> float:
    """The value of a parsed expression; a step without a finite real value raises a
    plain message that the caller completes with the expression and the point."""
    if isinstance(tree, float):
        return tree
    if tree == "L":
        return float(load)
    if tree == "R":
        return float(resources)
    assert isinstance(tree, tuple)
    if tree[0] == "neg":
        return -_evaluate(tree[1], load, resources)
    op, left, right = tree[0], _evaluate(tree[1], load, resources), _evaluate(tree[2], load, resources)
    if op in ("/", "%") and right == 0:
        raise ExpressionError("divides by zero")
    if op == "^":
        if left == 0 and right < 0:
            raise ExpressionError("divides by zero (0 to a negative power)")
        if left < 0 and not float(right).is_integer():
            raise ExpressionError("is not a real number (a negative number to a fractional power)")
        try:
            value = math.pow(left, right)
        except OverflowError:
            raise ExpressionError("is too large for a number") from None
    elif op == "*":
        value = left * right
    elif op == "/":
        value = left / right
    elif op == "%":
        value = math.fmod(left, right)
    elif op == "+":
        value = left + right
    else:
        value = left - right
    if not math.isfinite(value):
        raise ExpressionError("is too large for a number")
    return value


def evaluate_expression(text: str, load: float, resources: float) -> float:
    """The value of :func:`parse_expression`'s expression at L = ``load``, R = ``resources``."""
    tree = parse_expression(text)
    try:
        return _evaluate(tree, load, resources)
    except ExpressionError as exc:
        raise ExpressionError(f"thresholdFromExpression: {_shown(text)} {exc} at L={load:g}, R={resources:g}") \
            from None


def check_expression(text: str, loads: Sequence[float], resources: Sequence[float],
                     minimum: float | None = 0.0) -> None:
    """The expression over every (load, resources) pair an execution can try, so that one
    that divides by zero or turns negative at some load is refused before the run starts,
    not found by the experiment at that load. The error names the first such point."""
    tree = parse_expression(text)
    for load in loads:
        for res in resources:
            try:
                value = _evaluate(tree, load, res)
            except ExpressionError as exc:
                raise ExpressionError(f"thresholdFromExpression: {_shown(text)} {exc} at L={load:g}, R={res:g} "
                                      "(a load and resource value of the execution)") from None
            if minimum is not None and value < minimum:
                raise ExpressionError(f"thresholdFromExpression: {_shown(text)} is {value:g} at L={load:g}, "
                                      f"R={res:g} (a load and resource value of the execution); a threshold "
                                      f"must be at least {minimum:g}")
