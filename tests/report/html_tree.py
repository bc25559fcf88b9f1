"""A minimal HTML tree (standard library parser) for the report tests: find elements, read their text."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from html.parser import HTMLParser

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


@dataclasses.dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = dataclasses.field(default_factory=list)

    def iter(self, tag: str | None = None, **attrs: str) -> Iterator[Element]:
        """Descendants (self included) with this tag and attributes; ``class_`` matches one of the classes."""
        wanted_class = attrs.pop("class_", None)
        for child in self._walk():
            if tag is not None and child.tag != tag:
                continue
            if wanted_class is not None and wanted_class not in child.attrs.get("class", "").split():
                continue
            if all(child.attrs.get(k) == v for k, v in attrs.items()):
                yield child

    def find(self, tag: str | None = None, **attrs: str) -> Element:
        found = next(self.iter(tag, **attrs), None)
        assert found is not None, f"no <{tag}> with {attrs}"
        return found

    def _walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child._walk()

    @property
    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text for c in self.children]
        return " ".join(" ".join(parts).split())


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return
        raise AssertionError(f"</{tag}> closes nothing")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], f"unclosed elements: {[e.tag for e in builder.stack[1:]]}"
    return builder.root
