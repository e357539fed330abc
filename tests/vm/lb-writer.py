#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A misbehaving (or plain) writer for a loopback's writer node.

lb-writer.py DEV CASE...

Cases, run in order on one open file; each prints "PASS ..." or "FAIL ...":
  badfmt     S_FMT(OUTPUT) with an unknown fourcc and a silly size: adjusted
             (0, YUYV, a size within limits), as S_FMT does
  captype    G_FMT with the capture type: EINVAL
  nofmt      a whole frame of the format in force, before any S_FMT: taken
  short      1000 bytes of a frame: taken (as drivers take short writes),
             never shown
  frames:N:Y N frames of uniform luma Y at 15 fps (the format in force)
  forever:Y  frames until killed
"""
import errno
import fcntl
import os
import struct
import sys
import time

VIDIOC_G_FMT = 0xc0d05604
VIDIOC_S_FMT = 0xc0d05605
OUTPUT = 2
CAPTURE = 1
YUYV = 0x56595559


def fmt_buf(typ, w=0, h=0, fourcc=0):
    return bytearray(struct.pack("I4x12I", typ, w, h, fourcc, 1, 0, 0, 0, 0, 0, 0, 0, 0)
                     + bytes(208 - 56))


def pix(buf):
    w, h, fourcc, _, bpl, size = struct.unpack_from("6I", buf, 8)
    return w, h, fourcc, bpl, size


def g_fmt(fd, typ=OUTPUT):
    b = fmt_buf(typ)
    fcntl.ioctl(fd, VIDIOC_G_FMT, b)
    return pix(b)


def frame(w, h, fourcc, size, y):
    if fourcc == YUYV:
        return bytes([y, 128]) * (size // 2)
    return bytes([y]) * (w * h) + bytes([128]) * (size - w * h)


def main():
    dev, cases = sys.argv[1], sys.argv[2:]
    fd = os.open(dev, os.O_RDWR)
    rc = 0

    def result(ok, what):
        nonlocal rc
        print(("PASS " if ok else "FAIL ") + what, flush=True)
        rc |= not ok

    for case in cases:
        if case == "badfmt":
            b = fmt_buf(OUTPUT, 0, 99999, 0x5a5a5a5a)
            fcntl.ioctl(fd, VIDIOC_S_FMT, b)
            w, h, fourcc, _, _ = pix(b)
            result(fourcc == YUYV and 2 <= w <= 8192 and 2 <= h <= 8192,
                   f"garbage S_FMT adjusted to {w}x{h} {fourcc:#x}")
        elif case == "captype":
            try:
                g_fmt(fd, CAPTURE)
                result(False, "G_FMT(CAPTURE) on the writer node succeeded")
            except OSError as e:
                result(e.errno == errno.EINVAL, f"G_FMT(CAPTURE) on the writer node: {e.strerror}")
        elif case == "nofmt":
            w, h, fourcc, _, size = g_fmt(fd)
            n = os.write(fd, frame(w, h, fourcc, size, 200))
            result(n == size, f"a whole {w}x{h} frame before any S_FMT: {n} of {size} taken")
        elif case == "short":
            n = os.write(fd, bytes(1000))
            result(n == 1000, f"a 1000-byte write: {n} taken (never shown)")
        elif case.startswith("frames:") or case.startswith("forever:"):
            parts = case.split(":")
            n = int(parts[1]) if parts[0] == "frames" else -1
            y = int(parts[-1])
            w, h, fourcc, _, size = g_fmt(fd)
            data = frame(w, h, fourcc, size, y)
            i = 0
            while n < 0 or i < n:
                if os.write(fd, data) != size:
                    result(False, f"frame {i}: short")
                    break
                i += 1
                time.sleep(1 / 15)
            else:
                result(True, f"{n} frames of {w}x{h} luma {y} written")
    os.close(fd)
    return rc


if __name__ == "__main__":
    sys.exit(main())
