"""Writes scan.png: a white page with grey bars that look like lines of
text, so scan.pdf is an image with no text layer. Stdlib only."""
import struct
import zlib

W, H = 620, 877


def pixel(x, y):
    # Bars 14 px tall every 30 px, with ragged right ends, inside margins.
    if 60 <= x < 560 and 80 <= y < 800 and (y - 80) % 30 < 14:
        row = (y - 80) // 30
        return 40 if x < 560 - (row * 37) % 180 else 255
    return 255


rows = b"".join(b"\x00" + bytes(pixel(x, y) for x in range(W)) for y in range(H))


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


png = b"\x89PNG\r\n\x1a\n"
png += chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 0, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows, 9))
png += chunk(b"IEND", b"")
open("scan.png", "wb").write(png)
