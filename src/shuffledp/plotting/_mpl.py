"""matplotlib as the figure jobs use it: the Agg backend, ``pyplot`` (:data:`plt`), and two of
matplotlib's caches widened so that a job measures each piece of text once per kind of output.

matplotlib caches text measurements per *renderer instance* and mathtext parses per *parser instance*
(at most 50 of them), while a figure job makes many renderers: ``tight_layout`` measures with one,
every ``savefig`` draws with a new one (two for a PDF written with ``bbox_inches="tight"`` or a layout
engine: the pre-draw's and the real draw's), and every figure has its own. So the same tick labels
(``$\\mathdefault{10^{-3}}$``: a pyparsing parse of several milliseconds each) and titles were measured
again in every save of every figure. :func:`share_text_caches` keys both caches on what their values
depend on instead: the renderer's class (Agg or PDF) and dpi, the text, its font properties and
whether it is math (the mathtext parse: the parser's output type, the text, dpi, font properties,
antialiasing and hinting flags: the arguments matplotlib's own cache keys on, less the instance).
Both functions are pure in those arguments, so every figure is drawn with the same numbers and its
files are byte-identical (tests/test_plotting_mpl.py): only repeated work goes. Like matplotlib's
own caches, they assume that rcParams are not changed between figures (no shuffledp module changes
them; :func:`clear_text_caches` empties both). A matplotlib whose private functions differ from the
ones replaced here is left alone (:func:`share_text_caches` returns False).

Each module that draws imports :data:`plt` from here, so a job that only renders tables
(:mod:`~shuffledp.plotting.html_table`) never imports matplotlib.
"""

from __future__ import annotations

import inspect

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "share_text_caches", "clear_text_caches"]

_MAX = 1 << 16  # entries per cache: a figure job measures a few thousand strings
_metrics_store: dict = {}
_parse_store: dict = {}
_installed = False


def _shared_metrics(original, kinds):
    """``matplotlib.text._get_text_metrics_with_cache`` keyed on the renderer's class instead of the
    renderer (a renderer of another class, or whose dpi is not the figure's, goes to ``original``)."""

    def _get_text_metrics_with_cache(renderer, text, fontprop, ismath, dpi):
        kind = type(renderer)
        if kind not in kinds or ismath not in (True, False) or renderer.dpi != dpi:
            return original(renderer, text, fontprop, ismath, dpi)
        prop = fontprop.copy()  # FontProperties is mutable: the key holds a copy, as matplotlib's own cache does
        key = (kind, text, prop, ismath, dpi)
        try:
            return _metrics_store[key]
        except KeyError:
            pass
        if len(_metrics_store) >= _MAX:
            _metrics_store.clear()
        value = _metrics_store[key] = renderer.get_text_width_height_descent(text, prop, ismath)
        return value

    return _get_text_metrics_with_cache


def _shared_parse(compute):
    """``MathTextParser._parse_cached`` keyed on the parser's output type instead of the parser."""

    def _parse_cached(self, s, dpi, prop, antialiased, load_glyph_flags):
        key = (self._output_type, s, dpi, prop, antialiased, load_glyph_flags)
        try:
            return _parse_store[key]
        except KeyError:
            pass
        if len(_parse_store) >= _MAX:
            _parse_store.clear()
        value = _parse_store[key] = compute(self, s, dpi, prop, antialiased, load_glyph_flags)
        return value

    return _parse_cached


def _replaceable(text, mathtext) -> bool:
    """matplotlib's private functions have the signatures this module was written against."""
    metrics = getattr(text, "_get_text_metrics_with_cache", None)
    parse = getattr(mathtext.MathTextParser, "_parse_cached", None)
    compute = getattr(parse, "__wrapped__", None)
    if metrics is None or compute is None:
        return False
    return (list(inspect.signature(metrics).parameters) == ["renderer", "text", "fontprop", "ismath", "dpi"]
            and list(inspect.signature(compute).parameters)
            == ["self", "s", "dpi", "prop", "antialiased", "load_glyph_flags"])


def share_text_caches() -> bool:
    """Install the shared caches (once per process); False if this matplotlib's internals differ."""
    global _installed
    if _installed:
        return True
    from matplotlib import mathtext, text
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.backends.backend_pdf import RendererPdf

    if not _replaceable(text, mathtext):
        return False
    text._get_text_metrics_with_cache = _shared_metrics(text._get_text_metrics_with_cache, (RendererAgg, RendererPdf))
    mathtext.MathTextParser._parse_cached = _shared_parse(mathtext.MathTextParser._parse_cached.__wrapped__)
    _installed = True
    return True


def clear_text_caches() -> None:
    """Forget every shared text measurement and mathtext parse (after a change of rcParams)."""
    _metrics_store.clear()
    _parse_store.clear()


share_text_caches()
