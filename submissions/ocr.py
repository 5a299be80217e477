"""Reading menu photos: the text lines of a JPEG, by RapidOCR (ONNX models shipped inside the
wheel, offline; FIELD-NOTES: a rendered Portuguese menu line read with scores 0.95-1.0 in
about a second on CPU).

One engine per process, made on first use (loading takes about 0.6 s) and used by one thread
at a time.
"""

import io
import logging
import threading
from dataclasses import dataclass

from PIL import Image, ImageOps, ImageStat, UnidentifiedImageError

logger = logging.getLogger(__name__)

_engine = None
_lock = threading.Lock()
# Boxes read with less confidence than this are left out (a smudge, a logo).
MIN_SCORE = 0.5
# The longest side a photo is read at.
MAX_SIDE = 2000
# A photo is read at most this many times as long as it is wide, or wide as it is long: a
# narrower strip is padded. The engine scales every photo's shorter side up to 736 pixels, and
# a JPEG of 20000 x 1 pixels (5.6 kB), read as 2000 x 1, asked for an array of 11 GiB.
MAX_ASPECT = 4
# A line the automated reviewer may approve was read from boxes at least this many pixels tall
# (as read) with at least this confidence each. Print smaller than that is misread with high
# scores: the engine read a rendered "Brahma 600ml R$ 12,90" right from boxes of 19 pixels or
# more, as "Brahma 000ml R$ 12,90" (0.93-0.95) from 17 and "irahms 500mlR$ 12.50" (0.90)
# from smaller; a 160 x 70 photo of "R$ 12,90" was read "R$ 12.50" with 0.85.
SURE_HEIGHT = 24
SURE_SCORE = 0.9


@dataclass(frozen=True)
class Line:
    """A printed line of a photo, and whether the engine was sure of every box of it
    (SURE_HEIGHT, SURE_SCORE)."""

    text: str
    sure: bool


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
    """The photo as RGB, upright as it is shown (its EXIF orientation applied: a phone stores
    a portrait photo sideways), at most MAX_SIDE pixels a side (decoded at a reduced scale
    when it is larger: a phone's 12 megapixels read no better, only slower), and no narrower
    than MAX_ASPECT allows."""
    try:
        with Image.open(io.BytesIO(jpeg)) as img:
            img.draft("RGB", (MAX_SIDE, MAX_SIDE))
            image = ImageOps.exif_transpose(img).convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise Unreadable(str(exc)) from exc
    image.thumbnail((MAX_SIDE, MAX_SIDE))
    return _padded(image)


def _padded(image: Image.Image) -> Image.Image:
    """A strip narrower than MAX_ASPECT allows, widened with its own median colour."""
    width, height = image.size
    least = -(-max(width, height) // MAX_ASPECT)
    if min(width, height) >= least:
        return image
    size = (width, least) if width >= height else (least, height)
    canvas = Image.new("RGB", size, tuple(int(v) for v in ImageStat.Stat(image).median))
    canvas.paste(image, (0, 0))
    return canvas


def read_lines(jpeg: bytes) -> list[Line]:
    """The photo's text, one Line per printed line, top to bottom: the boxes the engine finds
    are joined left to right when their middles share a line."""
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
        boxes.append((min(ys), max(ys), min(xs), text.strip(), float(score)))
    return group_lines(boxes)


def group_lines(boxes: list[tuple[float, float, float, str, float]]) -> list[Line]:
    """(top, bottom, left, text, score) boxes as lines: a box whose vertical middle falls
    inside a line's span joins it; each line is read left to right, and is sure when each of
    its boxes is (SURE_HEIGHT, SURE_SCORE)."""
    lines: list[list] = []  # [top, bottom, [(left, text, score, height), ...]]
    for top, bottom, left, text, score in sorted(boxes, key=lambda b: (b[0] + b[1]) / 2):
        middle = (top + bottom) / 2
        box = (left, text, score, bottom - top)
        if lines and lines[-1][0] <= middle <= lines[-1][1]:
            lines[-1][2].append(box)
        else:
            lines.append([top, bottom, [box]])
    return [
        Line(
            text=" ".join(text for _, text, _, _ in sorted(parts)),
            sure=all(
                score >= SURE_SCORE and height >= SURE_HEIGHT for _, _, score, height in parts
            ),
        )
        for _, _, parts in lines
    ]
