"""tests/e2e/lib/tfevents.py - read a TensorBoard event file with the standard library only,
checking every record's framing and masked CRC-32C, and compare its scalars with the CSV mfu
wrote for the same run.

    /usr/bin/python3 tfevents.py EVENTS_FILE CSV_FILE RUN

Record framing and the masking are TensorFlow's TFRecord format; the CRC-32C here is a table
implementation written independently of mfu's (bit by bit), checked against the catalogue's
check value for "123456789" (CRC-32/ISCSI: 0xe3069283). Exit 0 when every scalar of the CSV
(as float32) is in the file at its step and nothing else is but the step's seq_len and FLOPs
per token (positive; no CSV column); the counts are printed. A CSV `nan` (a loss logged as NaN)
must be NaN in the file; an empty field (not logged) absent.
"""
import csv
import math
import struct
import sys


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = b[i:i + 8]
            i += 8
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif w == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def read_events(path):
    data = open(path, "rb").read()
    i, events = 0, []
    while i < len(data):
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        (c1,) = struct.unpack("<I", data[i + 8:i + 12])
        assert c1 == masked(head), "length CRC at byte %d" % i
        body = data[i + 12:i + 12 + n]
        (c2,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        assert c2 == masked(body), "data CRC at byte %d" % i
        events.append(body)
        i += 16 + n
    return events


# the figures a step was computed with, written beside the CSV's series
FIGURES = ("mfu/seq_len", "mfu/model_flops_per_token")


def main():
    assert crc32c(b"123456789") == 0xE3069283
    events = read_events(sys.argv[1])
    first = dict((f, v) for f, w, v in fields(events[0]))
    assert first[3] == b"brain.Event:2", first
    got, figures = {}, 0
    for ev in events[1:]:
        step, scalars = None, {}
        for f, w, v in fields(ev):
            if f == 2:
                step = v - (1 << 64) if v >= 1 << 63 else v
            elif f == 5:
                for sf, sw, sv in fields(v):
                    assert sf == 1
                    val = dict((a, c) for a, _, c in fields(sv))
                    scalars[val[1].decode()] = struct.unpack("<f", val[2])[0]
            elif f == 1:
                struct.unpack("<d", v)
        for tag, x in scalars.items():
            if tag in FIGURES:  # not CSV columns: counted, positive
                assert x > 0, (step, tag, x)
                figures += 1
                continue
            got[(step, tag)] = x
    want = {}
    names = ["mfu", "hfu", "tokens_per_second", "model_flops_per_second_per_device",
             "step_time_s", "reported_mfu", "loss"]
    for row in csv.DictReader(open(sys.argv[2])):
        if row["run"] != sys.argv[3]:
            continue
        for name in names:
            if row[name] != "":
                f32 = struct.unpack("<f", struct.pack("<f", float(row[name])))[0]
                want[(int(row["step"]), "mfu/" + name)] = f32
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [k for k in want if k in got and not (got[k] == want[k] or
                                                  (math.isnan(got[k]) and math.isnan(want[k])))]
    print("events %d, scalars %d, csv values %d, missing %d, extra %d, wrong %d, figures %d"
          % (len(events), len(got), len(want), len(missing), len(extra), len(wrong), figures))
    if missing or extra or wrong or not want or not figures:
        print("first problems:", missing[:3], extra[:3], wrong[:3])
        sys.exit(1)


if __name__ == "__main__":
    main()
