"""The Jinja2 environment every template-based emitter renders with.

Templates ship inside the package (generator/templates/...) and are read through
importlib.resources, so an installed wheel renders exactly what a checkout does. Undefined
variables are errors (StrictUndefined); output keeps its final newline; block tags do not leave
blank lines or indentation behind; autoescape is on for HTML and SVG templates (`*.html.j2`,
`*.svg.j2`) and off for every other text (configs, YAML, Markdown), where HTML entities would be
wrong. Jinja2's select_autoescape matches the end of the name, so the `.j2` suffix is part of the
extension it is given.

Templates receive plain data (dicts and lists). `x.key` on a dict looks the key up first: Jinja2's
default tries an attribute first and reaches the item through an AttributeError, which made the
switch configurations render almost 3x slower. Templates keep the readable dot form.

Compiled templates are kept in memory only (the environment's cache, one compile per process; the
forked workers inherit it): never loaded from disk, where Jinja2's FileSystemBytecodeCache unpickles
what it finds, so a file planted in the cache folder would run code inside `wanka generate`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import jinja2

PACKAGE = "generator"
FOLDER = "templates"
AUTOESCAPED = ("html.j2", "svg.j2", "html", "svg")  # template name endings escaped for markup


class ResourceLoader(jinja2.BaseLoader):
    """Loads `name` (a '/'-separated path under generator/templates/) from the installed package."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        parts = template.split("/")
        if ".." in parts or "" in parts:
            raise jinja2.TemplateNotFound(template)
        node = resources.files(PACKAGE).joinpath(FOLDER, *parts)
        if not node.is_file():
            raise jinja2.TemplateNotFound(template)
        return node.read_text(encoding="utf-8"), None, lambda: True


class Environment(jinja2.Environment):
    """Jinja2's environment with a dict-first `x.key` (same results, without the exception)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def markdown_code(text: Any) -> str:
    """`text` as one Markdown code span, whatever backticks it holds (CommonMark: a fence longer
    than any backtick run inside, padded with a space when the text starts or ends with one)."""
    text = str(text)
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


@cache
def environment() -> Environment:
    env = Environment(
        loader=ResourceLoader(),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=jinja2.select_autoescape(
            enabled_extensions=AUTOESCAPED, default_for_string=False, default=False
        ),
        auto_reload=False,
    )
    env.filters["code"] = markdown_code  # free text in Markdown: a code span, never markup
    return env


def template(name: str) -> jinja2.Template:
    """A compiled template, cached by the environment (compile once, render many times)."""
    return environment().get_template(name)


def render(template_name: str, /, **data: Any) -> str:
    return template(template_name).render(**data)
