#!/usr/bin/env python
"""Draw the installed app's icons (static/icons/*.png) once; the PNGs are
committed, so this runs again only when the mark changes.

The mark is the header's and the favicon's: a white "J" on the accent colour
(static/css/tokens.css, light side of --accent and --accent-text). "any"
icons are a rounded square on a transparent ground, as favicon.svg draws it;
the maskable one fills the whole square and keeps the letter inside the
central 80% circle that every launcher's mask leaves visible
(https://w3c.github.io/manifest/#icon-masks).

    .venv/bin/python scripts/make_icons.py
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "static" / "icons"
ACCENT = "#3553d1"  # tokens.css --accent, light side
ACCENT_TEXT = "#ffffff"  # tokens.css --accent-text, light side
# A bold sans the Debian image has; Pillow's own font if it is missing.
BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
SUPERSAMPLE = 4  # drawn large and scaled down, for smooth edges


def font(size: int) -> ImageFont.FreeTypeFont:
    if BOLD.exists():
        return ImageFont.truetype(str(BOLD), size)
    return ImageFont.load_default(size)


def draw_icon(size: int, *, maskable: bool) -> Image.Image:
    big = size * SUPERSAMPLE
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    if maskable:
        draw.rectangle((0, 0, big, big), fill=ACCENT)
        letter = big * 0.42  # well inside the safe circle (radius 40%)
    else:
        # favicon.svg: rx 7 on a 32 square.
        draw.rounded_rectangle((0, 0, big - 1, big - 1), radius=big * 7 // 32, fill=ACCENT)
        letter = big * 0.58
    draw.text((big / 2, big / 2), "J", font=font(int(letter)), fill=ACCENT_TEXT, anchor="mm")
    return image.resize((size, size), Image.Resampling.LANCZOS)


ICONS = {
    "icon-192.png": (192, False),
    "icon-512.png": (512, False),
    "icon-maskable-512.png": (512, True),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (size, maskable) in ICONS.items():
        draw_icon(size, maskable=maskable).save(OUT / name, optimize=True)
        print(OUT / name)


if __name__ == "__main__":
    main()
