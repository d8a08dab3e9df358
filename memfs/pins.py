"""Pins: the user's always-in-context facts, one Markdown list item each in system/pins.md.

The file stays the user's: headings and comments around the list are kept as written,
and adding or removing a pin touches only that pin's lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it import MarkdownIt

from memfs.errors import BadInputError

_MD = MarkdownIt("commonmark")


@dataclass(frozen=True)
class Pin:
    text: str
    start: int
    end: int
    """Line span ``[start, end)`` of the list item in the file."""


@dataclass
class PinFile:
    lines: list[str]
    pins: list[Pin] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def texts(self) -> list[str]:
        return [p.text for p in self.pins]


def parse_pins(text: str) -> PinFile:
    """Find the pins and name every line that is neither a pin, a heading nor a comment."""
    lines = text.splitlines(keepends=True)
    result = PinFile(lines=lines)
    tokens = _MD.parse(text)
    depth = 0
    for tok in tokens:
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open" and depth == 1 and tok.map:
            start, end = tok.map
            item = "".join(lines[start:end])
            result.pins.append(Pin(text=_item_text(item), start=start, end=end))
        elif depth == 0 and tok.level == 0 and tok.type in ("paragraph_open", "code_block",
                                                             "fence", "blockquote_open",
                                                             "table_open") and tok.map:
            result.problems.append(
                f"line {tok.map[0] + 1}: not a list item (each pin is one '- ' item)")
    for pin in result.pins:
        if not pin.text:
            result.problems.append(f"line {pin.start + 1}: empty pin")
        result.problems += _lazy_lines(lines, pin)
    return result


def _lazy_lines(lines: list[str], pin: Pin) -> list[str]:
    """Plain unindented lines that Markdown would fold into the pin above ("lazy
    continuation"): almost always a new pin written without its '- '. A pin continues
    only on indented lines."""
    return [f"line {n + 1}: not a list item (each pin is one '- ' item; indent a line "
            "to continue the pin above)"
            for n in range(pin.start + 1, pin.end)
            if lines[n].strip() and not lines[n][:1].isspace()]


def _item_text(item: str) -> str:
    body = item.strip()
    for marker in ("- ", "* ", "+ "):
        if body.startswith(marker):
            body = body[2:]
            break
    else:
        head, _, rest = body.partition(" ")
        if head.rstrip(".)").isdigit():
            body = rest
        elif body in ("-", "*", "+"):
            body = ""
    return " ".join(body.split())


def add_pin(text: str, pin: str) -> str:
    """``text`` with ``pin`` appended as a list item after the last pin."""
    clean = " ".join(pin.split())
    if not clean:
        raise BadInputError("pin: the text is empty")
    parsed = parse_pins(text)
    lines = list(parsed.lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    item = f"- {clean}\n"
    if parsed.pins:
        lines.insert(parsed.pins[-1].end, item)
    else:
        if lines and lines[-1].strip():
            lines.append("\n")
        lines.append(item)
    return "".join(lines)


def remove_pin(text: str, number: int) -> tuple[str, str]:
    """Remove pin ``number`` (1-based, as `pin ls` shows it); return new text and the pin."""
    parsed = parse_pins(text)
    if not 1 <= number <= len(parsed.pins):
        raise BadInputError(f"pin rm: there is no pin {number} (there are {len(parsed.pins)})")
    pin = parsed.pins[number - 1]
    lines = parsed.lines[: pin.start] + parsed.lines[pin.end:]
    return "".join(lines), pin.text
