"""A report's files on disk: rendered under temporary names, published only when the render worked,
and exported to HTML that loads nothing remote.

Example::

    files = RenderFiles(Path("reports/r1"), "run_report")
    ...                                   # execute into files.notebook_tmp, export to files.html_tmp
    files.publish(ok=True)                # reports/r1/run_report.{ipynb,html,summary.json}
    files.clean()
"""

from __future__ import annotations

import contextlib
import functools
import html
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coder_eval.lazy import without_iri_format

OFFLINE_TEMPLATE = "coder_eval_offline.html.j2"
OFFLINE_TEMPLATE_SOURCE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
"""nbconvert's lab template without the scripts it loads from CDNs (require.js, MathJax, the widget
renderer, mermaid): reports carry no widgets, math or diagrams, and must read offline."""


@dataclass(frozen=True)
class RenderFiles:
    """The final and temporary names of one template's files in one report folder."""

    folder: Path
    template: str

    def _name(self, suffix: str, state: str = "") -> Path:
        stem = f".{self.template}.rendering" if state == "tmp" else self.template + state
        return self.folder / f"{stem}{suffix}"

    @property
    def notebook(self) -> Path:
        return self._name(".ipynb")

    @property
    def html(self) -> Path:
        return self._name(".html")

    @property
    def summary(self) -> Path:
        return self._name(".summary.json")

    @property
    def notebook_tmp(self) -> Path:
        return self._name(".ipynb", "tmp")

    @property
    def html_tmp(self) -> Path:
        return self._name(".html", "tmp")

    @property
    def summary_tmp(self) -> Path:
        return self._name(".summary.json", "tmp")

    @property
    def failed(self) -> tuple[Path, Path]:
        """``<template>.failed.ipynb`` and ``.failed.html``: the last failed render, shown, not kept."""
        return self._name(".ipynb", ".failed"), self._name(".html", ".failed")

    def publish(self, ok: bool) -> None:
        """Move the temporary files into place: over the report when ``ok``, else to the failed names
        (the report, if any, is left as it was)."""
        if ok:
            self.summary_tmp.replace(self.summary)
            self.notebook_tmp.replace(self.notebook)
            self.html_tmp.replace(self.html)
            for stale in self.failed:
                stale.unlink(missing_ok=True)
            return
        failed_notebook, failed_html = self.failed
        self.notebook_tmp.replace(failed_notebook)
        self.html_tmp.replace(failed_html)

    def clean(self) -> None:
        """Remove whatever temporary file a render left (after ``publish``, or after a crash)."""
        for tmp in (self.notebook_tmp, self.html_tmp, self.summary_tmp):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def paths(self, ok: bool) -> tuple[Path, Path]:
        """The notebook and HTML a render produced."""
        return (self.notebook, self.html) if ok else self.failed


def untyped(module: str) -> Any:
    """Import a module whose functions carry no annotations (nbformat, nbconvert), typed as Any."""
    return importlib.import_module(module)


def mark_failed(notebook: Path, error: str) -> str:
    """Put a visible error banner at the top of a notebook that papermill did not mark; returns error."""
    nbformat = untyped("nbformat")
    nb = nbformat.read(notebook, as_version=4)
    banner = f'<span style="color:red; font-size:1.5em">Report failed: {html.escape(error)}</span>'
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(banner))
    nbformat.write(nb, notebook)
    return error


def export_html(notebook: Path, target: Path, title: str) -> None:
    """The executed notebook as standalone HTML without code cells: figures are embedded data URIs,
    styles are inlined, and no script or style is fetched from the network."""
    without_iri_format()
    nb = untyped("nbformat").read(notebook, as_version=4)
    body, _ = html_exporter().from_notebook_node(nb, resources={"metadata": {"name": title}})
    target.write_text(body, encoding="utf-8")


@functools.cache
def html_exporter() -> Any:
    """nbconvert's HTML exporter on the offline template, made once (its templates are compiled
    once for every report a process renders)."""
    from jinja2 import DictLoader

    without_iri_format()

    return untyped("nbconvert").HTMLExporter(
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        extra_loaders=[DictLoader({OFFLINE_TEMPLATE: OFFLINE_TEMPLATE_SOURCE})],
        template_file=OFFLINE_TEMPLATE,
    )
