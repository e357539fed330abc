#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers for tests/vm/test-service.sh.

svc-helper.py notify SOCKET LOG NODE...
    A systemd NOTIFY_SOCKET stand-in: an AF_UNIX datagram socket at SOCKET.
    Every datagram goes to LOG as "<monotonic s> <message with \\n as |>".
    On the first READY=1 it opens each /dev/NODE at once and logs
    "at-ready NODE ok pid=P nonce=N" (QUERYCAP and VIDIOC_V4L2CUSE_INFO
    worked) or "at-ready NODE FAIL <why>".
svc-helper.py info NODE
    Print "pid=P nonce=N name=NAME id=ID" from VIDIOC_V4L2CUSE_INFO.
svc-helper.py consume NODE LOG [SECONDS]
    read() whole frames (G_FMT's sizeimage) until S seconds pass or LOG.stop
    exists; one line per frame: "<n> <monotonic s> <len> <hash of the
    bottom half>"; a last line "end <reason>".
svc-helper.py mkclip PATH W H N
    Write an N-frame 4:2:0 Y4M clip: flat grey frames, luma 40 + 8 * i.
"""
import fcntl
import hashlib
import os
import socket
import struct
import sys
import time

_IOC_READ, _IOC_WRITE = 2, 1


def _ioc(d, t, nr, size):
    return (d << 30) | (size << 16) | (ord(t) << 8) | nr


BASE_VIDIOC_PRIVATE = 192
VIDIOC_QUERYCAP = _ioc(_IOC_READ, "V", 0, 104)
VIDIOC_G_FMT = _ioc(_IOC_READ | _IOC_WRITE, "V", 4, 208)
INFO_FMT = "<IIQII32s32s8I"
VIDIOC_V4L2CUSE_INFO = _ioc(_IOC_READ, "V", BASE_VIDIOC_PRIVATE + 16,
                            struct.calcsize(INFO_FMT))
INFO_MAGIC = 0x49433256


def info(node):
    fd = os.open("/dev/" + node, os.O_RDWR | os.O_NONBLOCK)
    try:
        cap = bytearray(104)
        fcntl.ioctl(fd, VIDIOC_QUERYCAP, cap)
        if not cap.startswith(b"v4l2cuse\0"):
            raise RuntimeError("driver is %r" % bytes(cap[:16]))
        buf = bytearray(struct.calcsize(INFO_FMT))
        fcntl.ioctl(fd, VIDIOC_V4L2CUSE_INFO, buf)
        f = struct.unpack(INFO_FMT, buf)
        if f[0] != INFO_MAGIC:
            raise RuntimeError("bad magic %#x" % f[0])
        name = f[5].rstrip(b"\0").decode()
        did = f[6].rstrip(b"\0").decode()
        return "pid=%d nonce=%016x name=%s id=%s" % (f[3], f[2], name, did)
    finally:
        os.close(fd)


def notify(sock_path, log_path, nodes):
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    ready_seen = False
    with open(log_path, "a", buffering=1) as log:
        while True:
            msg = s.recv(4096).decode(errors="replace")
            log.write("%.3f %s\n" % (time.monotonic(), msg.replace("\n", "|")))
            if "READY=1" in msg.split("\n") and not ready_seen:
                ready_seen = True
                for node in nodes:
                    try:
                        log.write("at-ready %s ok %s\n" % (node, info(node)))
                    except Exception as e:  # noqa: BLE001 - report anything
                        log.write("at-ready %s FAIL %s\n" % (node, e))


def g_fmt(fd):
    buf = bytearray(208)
    struct.pack_into("<I", buf, 0, 1)  # V4L2_BUF_TYPE_VIDEO_CAPTURE
    fcntl.ioctl(fd, VIDIOC_G_FMT, buf)
    # struct v4l2_format: type, pad to 8, then v4l2_pix_format
    w, h, pixfmt, field, bpl, sizeimage = struct.unpack_from("<6I", buf, 8)
    return w, h, pixfmt, sizeimage


def consume(node, log_path, seconds):
    fd = os.open("/dev/" + node, os.O_RDWR)
    w, h, pixfmt, size = g_fmt(fd)
    stop = log_path + ".stop"
    end = time.monotonic() + seconds
    n = 0
    reason = "time"
    with open(log_path, "w", buffering=1) as log:
        log.write("format %dx%d %s %d\n" % (w, h, struct.pack("<I", pixfmt).decode(), size))
        while time.monotonic() < end:
            if os.path.exists(stop):
                reason = "stopped"
                break
            try:
                data = os.read(fd, size)
            except OSError as e:
                reason = "error %s" % e.strerror
                break
            digest = hashlib.sha1(data[len(data) // 2:]).hexdigest()[:12]
            log.write("%d %.3f %d %s\n" % (n, time.monotonic(), len(data), digest))
            n += 1
        log.write("end %s\n" % reason)
    os.close(fd)


def mkclip(path, w, h, frames):
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\n" % (w, h))
        for i in range(frames):
            f.write(b"FRAME\n")
            f.write(bytes([40 + 8 * i]) * (w * h))
            f.write(bytes([128]) * (w * h // 2))


def main():
    cmd = sys.argv[1]
    if cmd == "notify":
        notify(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "info":
        print(info(sys.argv[2]))
    elif cmd == "consume":
        secs = float(sys.argv[4]) if len(sys.argv) > 4 else 600
        consume(sys.argv[2], sys.argv[3], secs)
    elif cmd == "mkclip":
        mkclip(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
