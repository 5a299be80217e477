"""Reading menu photos: the text lines of a JPEG, by RapidOCR (ONNX models shipped inside the
wheel, offline; FIELD-NOTES: a rendered Portuguese menu line read with scores 0.95-1.0 in
about a second on CPU).

One engine per process, made on first use (loading takes about 0.6 s) and used by one thread
at a time.
"""

import io
import logging
import threading

from PIL import Image, UnidentifiedImageError

logger = logging.getLogger(__name__)

_engine = None
_lock = threading.Lock()
# Boxes read with less confidence than this are left out (a smudge, a logo).
MIN_SCORE = 0.5
# The longest side a photo is read at.
MAX_SIDE = 2000


class Unreadable(Exception):
    """The photo could not be read at all (not an image the engine can decode)."""


def _get_engine():
    global _engine
    if _engine is None:
        from rapidocr import RapidOCR

        for name in ("RapidOCR", "rapidocr"):  # its own INFO lines on every load and call
            logging.getLogger(name).setLevel(logging.WARNING)
        _engine = RapidOCR()
    return _engine


def _image(jpeg: bytes) -> Image.Image:
    """The photo as RGB, at most MAX_SIDE pixels a side (decoded at a reduced scale when it
    is larger: a phone's 12 megapixels read no better, only slower)."""
    try:
        with Image.open(io.BytesIO(jpeg)) as img:
            img.draft("RGB", (MAX_SIDE, MAX_SIDE))
            image = img.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise Unreadable(str(exc)) from exc
    image.thumbnail((MAX_SIDE, MAX_SIDE))
    return image


def read_lines(jpeg: bytes) -> list[str]:
    """The photo's text, one string per printed line, top to bottom: the boxes the engine
    finds are joined left to right when their middles share a line."""
    image = _image(jpeg)
    with _lock:
        try:
            result = _get_engine()(image)
        except Exception as exc:  # the engine's own failures on an image it cannot read
            raise Unreadable(str(exc)) from exc
    boxes = []
    if result.boxes is None:  # no text found
        return []
    for box, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
        if score < MIN_SCORE or not text.strip():
            continue
        ys = [float(point[1]) for point in box]
        xs = [float(point[0]) for point in box]
        boxes.append((min(ys), max(ys), min(xs), text.strip()))
    return group_lines(boxes)


def group_lines(boxes: list[tuple[float, float, float, str]]) -> list[str]:
    """(top, bottom, left, text) boxes as lines: a box whose vertical middle falls inside a
    line's span joins it; each line is read left to right."""
    lines: list[list] = []  # [top, bottom, [(left, text), ...]]
    for top, bottom, left, text in sorted(boxes, key=lambda b: (b[0] + b[1]) / 2):
        middle = (top + bottom) / 2
        if lines and lines[-1][0] <= middle <= lines[-1][1]:
            lines[-1][2].append((left, text))
        else:
            lines.append([top, bottom, [(left, text)]])
    return [" ".join(text for _, text in sorted(parts)) for _, _, parts in lines]
