#!/usr/bin/python3
"""pngcheck.py - is a screenshot a real rendering? (standard library only)

    pngcheck.py FILE WIDTH HEIGHT   ->  prints "WxH colours=N ink=F" and exits 0 when the PNG
                                        is WIDTH x HEIGHT, has at least 16 distinct colours and
                                        at least 3 % of its pixels differ from the most common
                                        colour (the page background); 1 otherwise.

Decodes 8-bit RGB / RGBA PNGs (what Chromium writes): IHDR, the IDAT stream, the five row
filters.
"""
import struct
import sys
import zlib
from collections import Counter


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("unsupported PNG layout (depth %d, type %d)" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if w is None:
        raise ValueError("no IHDR")
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif f == 4:
                line[x] = (line[x] + paeth(a, b, c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    w, h, bpp, rows = decode(path)
    counts = Counter()
    for r in rows[::2]:  # every other row and column is plenty
        for x in range(0, w * bpp, 2 * bpp):
            counts[r[x:x + 3]] += 1
    total = sum(counts.values())
    ink = 1 - counts.most_common(1)[0][1] / total
    print("%dx%d colours=%d ink=%.3f" % (w, h, len(counts), ink))
    ok = (w, h) == (want_w, want_h) and len(counts) >= 16 and ink >= 0.03
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
