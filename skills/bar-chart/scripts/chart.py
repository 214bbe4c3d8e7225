"""Write a PNG bar chart (and optionally a zip with the data) using only the standard library."""

import json
import os
import struct
import sys
import zipfile
import zlib

WIDTH, HEIGHT, BAR, GAP = 200, 120, 24, 8


def png_bytes(values: list[float]) -> bytes:
    top = max(values) if values and max(values) > 0 else 1.0
    pixels = [[(255, 255, 255)] * WIDTH for _ in range(HEIGHT)]
    for index, value in enumerate(values):
        left = GAP + index * (BAR + GAP)
        height = int((HEIGHT - 10) * value / top)
        for y in range(HEIGHT - height, HEIGHT):
            for x in range(left, min(left + BAR, WIDTH)):
                pixels[y][x] = (31, 119, 180)
    raw = b"".join(b"\x00" + bytes(channel for pixel in row for channel in pixel) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main(argv: list[str]) -> int:
    make_zip = "--zip" in argv
    pairs = [arg for arg in argv if arg != "--zip"]
    data = {}
    for pair in pairs:
        label, _, number = pair.partition("=")
        try:
            data[label] = float(number)
        except ValueError:
            print(f"not a label=value pair: {pair!r}", file=sys.stderr)
            return 2
    if not data:
        print("usage: chart.py label=value [label=value ...] [--zip]", file=sys.stderr)
        return 2
    out = os.environ.get("OUTPUT_DIR", "out")
    os.makedirs(out, exist_ok=True)
    image = png_bytes(list(data.values()))
    with open(os.path.join(out, "chart.png"), "wb") as handle:
        handle.write(image)
    if make_zip:
        with zipfile.ZipFile(os.path.join(out, "chart.zip"), "w") as archive:
            archive.writestr("chart.png", image)
            archive.writestr("data.json", json.dumps(data, indent=2))
    print(f"chart of {len(data)} bars written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
