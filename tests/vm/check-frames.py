#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Read frames from a v4l2cuse node with read() and check them.

check-frames.py DEVICE WIDTH HEIGHT [--frames N] [--bars75] [--save PATH]
                [--format YUYV|NV12|RGB3|BGR3|XR24|BX24] [--matrix 601|709]
                [--tolerance N]

Every read() must return exactly sizeimage bytes (YUYV: W*H*2). With
--bars75 every frame must show the 75% colour bars at the centre of each bar
on a row below the overlay: BT.601 limited-range Y'CbCr for YUYV,
full-range R'G'B' (191 or 0) for the RGB formats (--matrix 709: the Y'CbCr
of BT.709, which the daemon uses from 720 lines on; --tolerance: how far a
value may be off, 2 by default, more for frames that went through JPEG);
and consecutive frames may
differ only inside the overlay area (top rows, left part). DEVICE may also
be a file of frames another app saved (PipeWire captures in any of these
formats).
"""
import argparse
import os
import sys

# BT.601 limited range, 75% bars: white yellow cyan green magenta red blue black
BARS75 = [(180, 128, 128), (161, 44, 142), (131, 156, 44), (112, 72, 58),
          (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128)]


# The same bars as full-range R'G'B'.
BARS75_RGB = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
              (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]


def bars75_709():
    """The 75% bars in BT.709 limited-range Y'CbCr."""
    kr, kb = 0.2126, 0.0722
    out = []
    for r, g, b in BARS75_RGB:
        r, g, b = r / 255, g / 255, b / 255
        y = kr * r + (1 - kr - kb) * g + kb * b
        cb = (b - y) / (2 * (1 - kb))
        cr = (r - y) / (2 * (1 - kr))
        out.append((round(16 + 219 * y), round(128 + 224 * cb), round(128 + 224 * cr)))
    return out


def nv12_pixel(frame, width, height, x, y):
    uv = width * height + (y // 2) * width + (x & ~1)
    return frame[y * width + x], frame[uv], frame[uv + 1]


def yuyv_pixel(frame, width, x, y):
    base = (y * width + (x & ~1)) * 2
    yv = frame[base + (x & 1) * 2]
    return yv, frame[base + 1], frame[base + 3]


# fourcc: (bytes per pixel, offsets of R, G, B in a pixel), V4L2's layouts.
RGB_LAYOUTS = {
    "RGB3": (3, (0, 1, 2)),     # RGB24
    "BGR3": (3, (2, 1, 0)),     # BGR24
    "XR24": (4, (2, 1, 0)),     # XBGR32: B, G, R, X in memory
    "BX24": (4, (1, 2, 3)),     # XRGB32: X, R, G, B in memory
}


def rgb_pixel(frame, width, x, y, layout):
    bpp, (r, g, b) = layout
    base = (y * width + x) * bpp
    return frame[base + r], frame[base + g], frame[base + b]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("device")
    ap.add_argument("width", type=int)
    ap.add_argument("height", type=int)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--bars75", action="store_true")
    ap.add_argument("--overlay-rows", type=int, default=None,
                    help="frames may differ only above this row")
    ap.add_argument("--save", default=None)
    ap.add_argument("--format", default="YUYV", choices=["YUYV", "NV12"] + list(RGB_LAYOUTS))
    ap.add_argument("--matrix", default="601", choices=["601", "709"])
    ap.add_argument("--tolerance", type=int, default=2)
    a = ap.parse_args()

    layout = RGB_LAYOUTS.get(a.format)
    nv12 = a.format == "NV12"
    bpp = layout[0] if layout else 2
    size = a.width * a.height * 3 // 2 if nv12 else a.width * a.height * bpp
    # A regular file (a frame saved by another app) is read the same way.
    fd = os.open(a.device, os.O_RDWR if not os.path.isfile(a.device) else os.O_RDONLY)
    frames = []
    for i in range(a.frames):
        buf = os.read(fd, size)
        if len(buf) != size:
            print(f"frame {i}: read() returned {len(buf)} bytes, expected {size}")
            return 1
        frames.append(buf)
    os.close(fd)
    print(f"read {len(frames)} frames of {size} bytes each")
    if a.save:
        with open(a.save, "wb") as f:
            f.write(frames[-1])

    failed = False
    if a.bars75:
        row = a.height * 3 // 4
        bars = BARS75_RGB if layout else BARS75 if a.matrix == "601" else bars75_709()
        for n, frame in enumerate(frames):
            for i, want in enumerate(bars):
                x = (2 * i + 1) * a.width // 16
                if layout:
                    got = rgb_pixel(frame, a.width, x, row, layout)
                elif nv12:
                    got = nv12_pixel(frame, a.width, a.height, x, row)
                else:
                    got = yuyv_pixel(frame, a.width, x, row)
                ok = all(abs(g - w) <= a.tolerance for g, w in zip(got, want))
                if n == 0 or not ok:
                    print(f"frame {n} bar {i} at x={x} y={row}: got "
                          f"{'R/G/B' if layout else 'Y/U/V'} {got}, want {want}"
                          f"{'' if ok else '  MISMATCH'}")
                failed |= not ok

    # Which rows differ between consecutive frames?
    for i in range(1, len(frames)):
        line = a.width * (1 if nv12 else bpp)
        rows = [y for y in range(a.height)
                if frames[i][y * line:(y + 1) * line] !=
                frames[i - 1][y * line:(y + 1) * line]]
        if not rows:
            print(f"frame {i} is identical to frame {i - 1} (no counter?)")
            failed = True
            continue
        print(f"frame {i} differs from frame {i - 1} in rows {rows[0]}..{rows[-1]}")
        if a.overlay_rows is not None and rows[-1] >= a.overlay_rows:
            print(f"  rows below {a.overlay_rows} changed: something moves "
                  "outside the overlay")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
