#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Write the seed corpus of fuzz-ioctl (tests/fuzz/corpus/ioctl/).

Each seed is a program in fuzz-ioctl.c's encoding: [spec][end] then ops.
Run from the source root: tests/fuzz/gen-ioctl-seeds.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'ioctl')
BASE = 0x10000          # FUZZ_BASE: the fake caller memory
CTRLS = 0x100           # where seeds put a v4l2_ext_control array

# linux/videodev2.h (x86-64) and our private ioctls
QUERYCAP, G_PRIORITY, S_PRIORITY = 2154321408, 2147767875, 1074026052
ENUM_FMT, G_FMT, S_FMT, TRY_FMT = 3225441794, 3234878980, 3234878981, 3234879040
ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS = 3224131146, 3224655435
G_PARM, S_PARM, ENUMINPUT, G_INPUT, S_INPUT = 3234616853, 3234616854, 3226490394, 2147767846, 3221509671
LOG_STATUS, QUERYCTRL, QUERY_EXT_CTRL, QUERYMENU = 22086, 3225703972, 3236451943, 3224131109
G_CTRL, S_CTRL = 3221771803, 3221771804
G_EXT_CTRLS, S_EXT_CTRLS, TRY_EXT_CTRLS = 3223344711, 3223344712, 3223344713
SUBSCRIBE_EVENT, UNSUBSCRIBE_EVENT, DQEVENT = 1075861082, 1075861083, 2156418649
REQBUFS, CREATE_BUFS, QUERYBUF, PREPARE_BUF = 3222558216, 3238024796, 3227014665, 3227014749
QBUF, DQBUF, STREAMON, STREAMOFF = 3227014671, 3227014673, 1074026002, 1074026003
V4L2CUSE_INFO = 2155370192
YUYV, MJPG, NV12 = 1448695129, 1196444237, 842094158
BRIGHTNESS, CONTRAST, TEST_PATTERN = 9963776, 9963777, 10422531
NEXT_CTRL = 0x80000000
EVENT_CTRL, EVENT_SOURCE_CHANGE = 3, 5
POLLIN, POLLPRI = 1, 2

OPEN, RELEASE, IOCTL, IOCTL_RAW, READ, POLL, INTERRUPT, STEP, ATTACH, SWITCH = range(10)
NONBLOCK, SHIM = 1, 2


def patches(*ps):
    """A patch group: (offset, bytes) pairs the caller writes to its memory."""
    out = bytes([len(ps)])
    for off, data in ps:
        assert len(data) < 256
        out += struct.pack('<HB', off, len(data)) + data
    return out


def ioctl(cmd, arg=b'', slot=0, rounds=1, mode=0, extra=()):
    """IOCTL_RAW: the argument at offset 0, stable memory in later rounds."""
    first = patches((0, arg)) if arg else patches(*extra) if extra else patches()
    if arg and extra:
        first = patches((0, arg), *extra)
    return (bytes([IOCTL_RAW]) + struct.pack('<I', cmd) + bytes([slot, mode]) + first +
            patches() * rounds)


def u32(*v):
    return struct.pack('<%dI' % len(v), *v)


def fmt(w, h, pf):
    return u32(1, 0, w, h, pf)


def buf(index, memory=1):
    b = bytearray(88)
    struct.pack_into('<II', b, 0, index, 1)
    struct.pack_into('<I', b, 60, memory)
    return bytes(b)


def ext_ctrls(which, ctrls):
    cs = struct.pack('<IIIII4xQ', which, len(ctrls), 0, 0, 0, BASE + CTRLS)
    arr = b''.join(struct.pack('<III8s', cid, 0, 0, struct.pack('<q', v)) for cid, v in ctrls)
    return cs, arr


def op(*b):
    return bytes(b)


seeds = {}

seeds['formats'] = (op(0, 0) + op(OPEN, 0) +
    ioctl(QUERYCAP) + ioctl(ENUM_FMT, u32(0, 1)) + ioctl(ENUM_FMT, u32(1, 1)) +
    ioctl(G_FMT, u32(1)) + ioctl(TRY_FMT, fmt(96, 64, NV12)) + ioctl(S_FMT, fmt(160, 120, MJPG)) +
    ioctl(G_FMT, u32(1)) + ioctl(ENUM_FRAMESIZES, u32(0, YUYV)) +
    ioctl(ENUM_FRAMEINTERVALS, u32(0, YUYV, 160, 120)) + ioctl(G_PARM, u32(1)) +
    ioctl(S_PARM, u32(1, 0x1000, 0, 1, 15)) + ioctl(ENUMINPUT, u32(0)) + ioctl(G_INPUT) +
    ioctl(S_INPUT, u32(0)) + ioctl(LOG_STATUS, rounds=0) + ioctl(V4L2CUSE_INFO))

seeds['streaming'] = (op(0, 0) + op(OPEN, SHIM) +
    ioctl(REQBUFS, u32(2, 1, 1)) + ioctl(QUERYBUF, buf(0)) + ioctl(QBUF, buf(0)) +
    ioctl(QBUF, buf(1)) + ioctl(STREAMON, u32(1)) + op(STEP, 1) + ioctl(DQBUF, buf(0)) +
    ioctl(QBUF, buf(0)) + op(STEP, 3) + ioctl(DQBUF, buf(0)) + ioctl(DQBUF, buf(0)) +
    ioctl(DQBUF, buf(0)) + op(INTERRUPT, 0) + ioctl(DQBUF, buf(0)) + op(STEP, 0) +
    op(POLL, 0) + u32(POLLIN)[:2] + op(1) + ioctl(STREAMOFF, u32(1)) +
    ioctl(REQBUFS, u32(0, 1, 1)))

seeds['streaming-blocked-end'] = (op(0x80, 0) + op(OPEN, SHIM) + op(OPEN, SHIM | NONBLOCK) +
    ioctl(CREATE_BUFS, u32(0, 1, 1, 0) + fmt(160, 120, YUYV) + u32(1, 320, 38400)) + ioctl(PREPARE_BUF, buf(0)) +
    ioctl(QBUF, buf(0)) + ioctl(STREAMON, u32(1)) + ioctl(DQBUF, buf(0)) +
    ioctl(DQBUF, buf(0), slot=1) + op(SWITCH, 4) + op(STEP, 2))

seeds['read-poll'] = (op(1, 1) + op(OPEN, 0) + op(OPEN, NONBLOCK) +
    op(POLL, 0) + u32(POLLIN)[:2] + op(1) + op(READ, 0) + struct.pack('<H', 9600) + op(0) +
    op(STEP, 1) + op(READ, 0) + struct.pack('<H', 9600) + op(0) +
    op(READ, 1) + struct.pack('<H', 100) + op(NONBLOCK) + op(STEP, 3) +
    op(READ, 1) + struct.pack('<H', 65535) + op(NONBLOCK) +
    op(READ, 0) + struct.pack('<H', 9600) + op(4) + op(RELEASE, 1))

cs, arr = ext_ctrls(0, [(BRIGHTNESS, 200), (CONTRAST, 100)])
seeds['ext-ctrls'] = (op(0, 0) + op(OPEN, 0) +
    ioctl(G_EXT_CTRLS, cs, rounds=2, extra=[(CTRLS, arr)]) +
    ioctl(S_EXT_CTRLS, cs, rounds=2, extra=[(CTRLS, arr)]) +
    ioctl(TRY_EXT_CTRLS, cs, rounds=2, extra=[(CTRLS, arr)]) +
    # the count grows between rounds (another thread of the caller)
    op(IOCTL_RAW) + u32(S_EXT_CTRLS) + op(0, 0) + patches((0, cs), (CTRLS, arr)) +
    patches((4, u32(40))) + patches() +
    ioctl(G_CTRL, u32(BRIGHTNESS)) + ioctl(S_CTRL, u32(TEST_PATTERN, 3)) +
    ioctl(QUERYCTRL, u32(NEXT_CTRL)) + ioctl(QUERY_EXT_CTRL, u32(NEXT_CTRL | 0x40000000)) +
    ioctl(QUERYMENU, u32(TEST_PATTERN, 2)))

seeds['events-priority'] = (op(0, 1) + op(OPEN, 0) + op(OPEN, 0) +
    ioctl(SUBSCRIBE_EVENT, u32(EVENT_CTRL, BRIGHTNESS, 1)) +
    ioctl(SUBSCRIBE_EVENT, u32(EVENT_SOURCE_CHANGE, 0, 0)) +
    ioctl(S_CTRL, u32(BRIGHTNESS, 10), slot=1) + op(POLL, 0) + u32(POLLPRI)[:2] + op(1) +
    ioctl(DQEVENT) + ioctl(DQEVENT) + ioctl(UNSUBSCRIBE_EVENT, u32(0, 0)) +
    ioctl(S_PRIORITY, u32(3)) + ioctl(S_FMT, fmt(64, 48, YUYV), slot=1) +
    ioctl(G_PRIORITY, slot=1) + op(RELEASE, 0) + ioctl(S_FMT, fmt(64, 48, YUYV), slot=1))

# unknown, 32-bit (compat) and NULL-argument ioctls end in round one
seeds['raw-unknown'] = (op(0, 0) + op(OPEN, 0) + ioctl(0xc0105600, rounds=0) +
    ioctl(QUERYCAP, mode=0xe, rounds=0) + ioctl(G_FMT, mode=1, rounds=0) +
    ioctl(REQBUFS, u32(1, 1, 2), rounds=0) + op(ATTACH, 0) + ioctl(REQBUFS, u32(1, 1, 2)))

stream = (op(OPEN, SHIM) + ioctl(REQBUFS, u32(2, 1, 1)) + ioctl(QBUF, buf(0)) + ioctl(QBUF, buf(1)) +
          ioctl(STREAMON, u32(1)))

# REQBUFS(0) and STREAMOFF from another thread while DQBUF is blocked
seeds['reqbufs-while-blocked'] = (op(0, 0) + stream + op(STEP, 0) + ioctl(DQBUF, buf(0)) +
    ioctl(DQBUF, buf(0)) + ioctl(REQBUFS, u32(0, 1, 1)) + ioctl(STREAMOFF, u32(1)) +
    ioctl(REQBUFS, u32(0, 1, 1)) + op(STEP, 3))

# the source vanishes after 3 frames: the placeholder (0x80) takes over
seeds['vanish-placeholder'] = (op(0x84, 0) + stream + op(STEP, 3) + op(STEP, 3) +
    (ioctl(DQBUF, buf(0)) + ioctl(QBUF, buf(0)) + op(STEP, 3)) * 3 + ioctl(STREAMOFF, u32(1)) +
    ioctl(REQBUFS, u32(0, 1, 1)) + ioctl(S_FMT, fmt(96, 64, YUYV)) + ioctl(REQBUFS, u32(2, 1, 1)) +
    ioctl(QBUF, buf(0)) + ioctl(STREAMON, u32(1)) + op(STEP, 3) + ioctl(DQBUF, buf(0)))


def userptr_buf(index, addr=0, length=0):
    b = bytearray(buf(index, memory=2))
    struct.pack_into('<QI', b, 64, addr, length)
    return bytes(b)


seeds['userptr'] = (op(0, 0) + op(OPEN, SHIM) + ioctl(REQBUFS, u32(2, 1, 2)) +
    ioctl(QBUF, userptr_buf(0, BASE, 38400)) + ioctl(STREAMON, u32(1)) + op(STEP, 2) +
    ioctl(DQBUF, userptr_buf(0)))

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(data)
