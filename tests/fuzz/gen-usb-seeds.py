#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Write the seed corpus of fuzz-usb (tests/fuzz/corpus/usb/).

Each seed is what a USB/IP host sends on the socket (fuzz-usb.c): optional
op_common requests of the network protocol, then 48-byte URB commands
(big-endian), OUT data and isochronous descriptors after their header.
The control transfers are those vhci-hcd forwards while the kernel
enumerates the device and uvcvideo probes, streams and reads controls.
Run from anywhere: tests/fuzz/gen-usb-seeds.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'usb')

DEVID = (42 << 16) | 1
# fuzz-usb.c's devid bits 24..27: which fake op fails
FAIL_START, FAIL_GET, FAIL_SET, FAIL_BUSY = 1 << 24, 1 << 25, 1 << 26, 1 << 27
# transfer_flags bits fuzz-usb.c reads for a bulk payload's frame
VARIABLE, ERROR = 1 << 31, 1 << 30
# wTotalLength of fuzz-usb.c's configuration (its modes and controls)
CONFIG_TOTAL = 362

SUBMIT, UNLINK = 1, 2
OUT_DIR, IN_DIR = 0, 1
GET_DESCRIPTOR, SET_CONFIGURATION, GET_CONFIGURATION = 6, 9, 8
SET_INTERFACE, GET_INTERFACE, GET_STATUS, CLEAR_FEATURE = 11, 10, 0, 1
SET_CUR, GET_CUR, GET_MIN, GET_MAX, GET_RES, GET_LEN, GET_INFO, GET_DEF = (
    0x01, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87)
PROBE, COMMIT = 1, 2
PU, CT = 2, 1


class Stream:
    def __init__(self, devid=DEVID):
        self.data = b''
        self.seq = 0
        self.devid = devid

    def next_seq(self):
        self.seq += 1
        return self.seq

    def submit(self, direction, ep, length, setup=b'\0' * 8, packets=0, flags=None,
               payload=b'', devid=None):
        if flags is None:
            flags = 0x200 if direction == IN_DIR else 0
        seq = self.next_seq()
        self.data += struct.pack('>IIIII', SUBMIT, seq, self.devid if devid is None else devid,
                                 direction, ep)
        self.data += struct.pack('>IIIII', flags, length & 0xffffffff, 0,
                                 packets & 0xffffffff, 0) + setup + payload
        return seq

    def unlink(self, target):
        seq = self.next_seq()
        self.data += struct.pack('>IIIIII', UNLINK, seq, self.devid, 0, 0, target) + b'\0' * 24
        return seq

    def ctl_in(self, rtype, req, value, index, length, devid=None):
        setup = struct.pack('<BBHHH', rtype, req, value, index, length)
        return self.submit(IN_DIR, 0, length, setup, devid=devid)

    def ctl_out(self, rtype, req, value, index, data=b'', length=None, devid=None):
        setup = struct.pack('<BBHHH', rtype, req, value, index, len(data))
        return self.submit(OUT_DIR, 0, len(data) if length is None else length, setup,
                           payload=data, devid=devid)

    def op(self, code, status=0):
        self.data += struct.pack('>HHI', 0x0111, code, status)

    # the requests of enumeration and uvcvideo
    def get_descriptor(self, dtype, index, length, langid=0):
        return self.ctl_in(0x80, GET_DESCRIPTOR, dtype << 8 | index, langid, length)

    def enumerate(self):
        self.get_descriptor(1, 0, 64)
        self.get_descriptor(1, 0, 18)
        self.get_descriptor(2, 0, 9)
        self.get_descriptor(2, 0, CONFIG_TOTAL)
        self.get_descriptor(3, 0, 255)
        for i in (1, 2, 3):
            self.get_descriptor(3, i, 255, 0x0409)
        self.ctl_out(0x00, SET_CONFIGURATION, 1, 0)

    def vs(self, req, sel, length=26, data=None, devid=None):
        if data is not None:
            return self.ctl_out(0x21, req, sel << 8, 1, data, devid=devid)
        return self.ctl_in(0xa1, req, sel << 8, 1, length, devid=devid)

    def ctrl(self, req, unit, sel, size, data=None, devid=None):
        if data is not None:
            return self.ctl_out(0x21, req, sel << 8, unit << 8, data, devid=devid)
        return self.ctl_in(0xa1, req, sel << 8, unit << 8, size, devid=devid)

    def error_code(self, devid=None):
        return self.ctrl(GET_CUR, 0, 2, 1, devid=devid)


def probe(fmt, frame, interval, hint=1):
    return struct.pack('<HBBIHHHHHII', hint, fmt, frame, interval, 0, 0, 0, 0, 0, 0, 0)


def uvc_init(s):
    """uvcvideo's probe: SET_INTERFACE(1, 0), GET_DEF, SET_CUR, GET_CUR of PROBE."""
    s.ctl_out(0x01, SET_INTERFACE, 0, 1)
    s.vs(GET_DEF, PROBE)
    s.vs(SET_CUR, PROBE, data=probe(1, 1, 333333))
    s.vs(GET_CUR, PROBE)


def s_fmt(s, fmt, frame, interval):
    s.vs(SET_CUR, PROBE, data=probe(fmt, frame, interval))
    s.vs(GET_MIN, PROBE)
    s.vs(GET_MAX, PROBE)
    s.vs(SET_CUR, PROBE, data=probe(fmt, frame, interval))
    s.vs(GET_CUR, PROBE)


def seeds():
    s = Stream()
    s.get_descriptor(1, 0, 64)
    s.get_descriptor(1, 0, 18)
    s.get_descriptor(6, 0, 10)          # device qualifier: stall
    yield 'enum-device', s

    s = Stream()
    s.get_descriptor(1, 0, 18)
    s.get_descriptor(2, 0, 9)
    s.get_descriptor(2, 0, CONFIG_TOTAL)
    yield 'enum-config', s

    s = Stream()
    s.get_descriptor(3, 0, 255)
    for i in (1, 2, 3):
        s.get_descriptor(3, i, 2, 0x0409)
        s.get_descriptor(3, i, 255, 0x0409)
    s.get_descriptor(3, 4, 255, 0x0409)   # out of range: stall
    yield 'enum-strings', s

    s = Stream()
    s.ctl_out(0x00, SET_CONFIGURATION, 1, 0)
    s.ctl_in(0x80, GET_CONFIGURATION, 0, 0, 1)
    s.ctl_in(0x80, GET_STATUS, 0, 0, 2)
    s.ctl_out(0x01, SET_INTERFACE, 0, 1)
    s.ctl_in(0x81, GET_INTERFACE, 0, 1, 1)
    s.ctl_out(0x00, SET_CONFIGURATION, 0, 0)
    s.ctl_out(0x00, SET_CONFIGURATION, 2, 0)
    yield 'set-configuration', s

    s = Stream()
    s.enumerate()
    uvc_init(s)
    yield 'uvc-probe', s

    s = Stream()
    s_fmt(s, 3, 1, 333333)
    s_fmt(s, 2, 1, 2000000)
    s.vs(GET_LEN, PROBE, 2)
    s.vs(GET_INFO, PROBE, 1)
    s.vs(GET_RES, PROBE)
    s.vs(GET_CUR, COMMIT)
    yield 's-fmt', s

    s = Stream()
    s_fmt(s, 1, 2, 166666)
    s.vs(SET_CUR, COMMIT, data=probe(1, 2, 166666))
    urbs = [s.submit(IN_DIR, 1, 16384) for _ in range(5)]
    for _ in range(8):
        s.submit(IN_DIR, 1, 16384)
    s.ctl_out(0x02, CLEAR_FEATURE, 0, 0x81)
    for u in urbs:
        s.unlink(u)
    yield 'streamon', s

    s = Stream()
    s.vs(SET_CUR, COMMIT, data=probe(3, 2, 10000000))
    s.submit(IN_DIR, 1, 512, flags=VARIABLE | 100)
    s.submit(IN_DIR, 1, 512, flags=VARIABLE | 1000)
    s.submit(IN_DIR, 1, 512, flags=VARIABLE | 1000)
    s.submit(IN_DIR, 1, 2, flags=VARIABLE | ERROR | 5)
    s.submit(IN_DIR, 1, 0, flags=VARIABLE)
    s.submit(IN_DIR, 1, 16384, flags=VARIABLE)
    s.submit(IN_DIR, 1, 16384, flags=ERROR)
    s.ctl_out(0x00, SET_CONFIGURATION, 0, 0)
    yield 'stream-variable', s

    s = Stream()
    for unit, sel, size in ((PU, 2, 2), (PU, 3, 2), (PU, 6, 2), (PU, 5, 1), (CT, 4, 4),
                            (CT, 8, 1)):
        s.ctrl(GET_INFO, unit, sel, 1)
        for req in (GET_MIN, GET_MAX, GET_RES, GET_DEF, GET_CUR):
            s.ctrl(req, unit, sel, size)
        s.ctrl(GET_LEN, unit, sel, 2)
    s.error_code()
    yield 'controls-get', s

    s = Stream()
    s.ctrl(SET_CUR, PU, 2, 2, data=struct.pack('<h', -10))
    s.ctrl(SET_CUR, PU, 3, 2, data=struct.pack('<H', 300))     # out of range
    s.error_code()
    s.ctrl(SET_CUR, PU, 6, 2, data=struct.pack('<h', -180))
    s.ctrl(SET_CUR, CT, 4, 4, data=struct.pack('<I', 10000))
    s.ctrl(SET_CUR, PU, 5, 1, data=b'\x03')                     # out of range
    s.ctrl(SET_CUR, PU, 7, 2, data=b'\0\0')                     # not offered
    s.error_code()
    s.ctrl(GET_CUR, 9, 2, 2)                                    # no such unit
    s.error_code()
    yield 'controls-set', s

    s = Stream()
    s.vs(SET_CUR, COMMIT, data=probe(2, 1, 333666), devid=DEVID | FAIL_START)
    s.error_code()
    s.ctrl(GET_CUR, PU, 2, 2, devid=DEVID | FAIL_GET)
    s.error_code()
    s.ctrl(SET_CUR, PU, 2, 2, data=b'\x01\x00', devid=DEVID | FAIL_SET | FAIL_BUSY)
    s.error_code()
    s.ctrl(SET_CUR, PU, 2, 2, data=b'\x01\x00', devid=DEVID | FAIL_SET)
    s.error_code()
    yield 'ops-fail', s

    s = Stream()
    s.op(0x8005)
    s.op(0x8003)
    s.data += b'42-1'.ljust(32, b'\0')
    s.get_descriptor(1, 0, 64)
    yield 'net-import', s

    s = Stream()
    s.op(0x8005)
    s.op(0x8002)                        # another request: usbipd closes
    yield 'net-other', s

    s = Stream()
    s.ctl_out(0x21, SET_CUR, PROBE << 8, 1, probe(1, 1, 0)[:10], length=10)
    setup = struct.pack('<BBHHH', 0x21, SET_CUR, PROBE << 8, 1, 26)
    s.submit(OUT_DIR, 0, 10, setup, payload=b'\x01' * 10)        # shorter than wLength
    s.submit(OUT_DIR, 0, 4097, setup)                            # over USBIP_MAX_OUT: the end
    yield 'bad-lengths', s

    s = Stream()
    s.submit(IN_DIR, 1, 3072, packets=3, payload=b'\0' * 48)
    s.submit(OUT_DIR, 2, 100, payload=b'\xaa' * 100)
    s.submit(IN_DIR, 1, 512, packets=-1)
    s.submit(OUT_DIR, 1, 4, payload=b'abcd')
    s.submit(IN_DIR, 16, 4)                                      # ep 16: the end
    yield 'other-endpoints', s

    s = Stream()
    s.submit(IN_DIR, 2, 16)                                      # an interrupt URB: stall
    held = s.submit(IN_DIR, 1, 16384)
    s.unlink(held)
    s.unlink(held)
    s.unlink(0xffffffff)
    yield 'unlink', s

    s = Stream()
    s.op(0x8003)
    s.data += b'42-1'.ljust(32, b'\0')
    s.enumerate()
    uvc_init(s)
    s_fmt(s, 1, 1, 333333)
    s.vs(SET_CUR, COMMIT, data=probe(1, 1, 333333))
    urbs = [s.submit(IN_DIR, 1, 16384) for _ in range(5)]
    for _ in range(40):
        s.submit(IN_DIR, 1, 16384)
    s.ctl_out(0x02, CLEAR_FEATURE, 0, 0x81)
    for u in urbs:
        s.unlink(u)
    s.ctrl(SET_CUR, PU, 2, 2, data=struct.pack('<h', 5))
    s.ctl_out(0x00, SET_CONFIGURATION, 0, 0)
    yield 'session', s

    s = Stream()
    s.submit(IN_DIR, 1, -1)
    yield 'negative-length', s


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, s in seeds():
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(s.data)


if __name__ == '__main__':
    main()
