# SPDX-License-Identifier: Apache-2.0
# A generic netlink client for the live tests' judges (napi_family.py,
# qstats_judge.py), never nettune's code: a raw NETLINK_GENERIC socket,
# requests packed by hand, attributes read back by number as the kernel
# sends them (numbers from include/uapi/linux/netdev.h and genetlink.h).
import json, socket, struct, sys

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 16, 3, 1, 2


class Error(Exception):
    def __init__(self, errno):
        super().__init__(errno)
        self.errno = errno


def attrs(b):
    """{type: value} of the attributes in B: 2, 4 and 8 bytes as numbers,
    anything else as bytes (nested ones left to the caller)."""
    out, off = {}, 0
    while off + 4 <= len(b):
        l, t = struct.unpack_from("=HH", b, off)
        if l < 4:
            break
        v = b[off + 4:off + l]
        n = {2: "=H", 4: "=I", 8: "=Q"}.get(len(v))
        out[t & 0x3fff] = struct.unpack(n, v)[0] if n else v
        off += (l + 3) & ~3
    return out


def u32(t, v):
    return struct.pack("=HHI", 8, t, v)


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        self.seq = 0

    def _send(self, typ, flags, cmd, payload=b""):
        self.seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + payload
        self.s.send(struct.pack("=IHHII", 16 + len(body), typ, NLM_F_REQUEST | flags, self.seq, 0) + body)

    def _answers(self):
        """Each message's attributes until the request's end; Error on the
        kernel's refusal (an error message, or a DONE that carries one)."""
        while True:
            b = self.s.recv(65536)
            off = 0
            while off + 16 <= len(b):
                l, t = struct.unpack_from("=IH", b, off)
                p = b[off + 16:off + l]
                off += (l + 3) & ~3
                if t in (NLMSG_ERROR, NLMSG_DONE):
                    e = struct.unpack_from("=i", p)[0] if len(p) >= 4 else 0
                    if e < 0:
                        raise Error(-e)
                    if t == NLMSG_DONE or e == 0:
                        return
                    continue
                yield attrs(p[4:])

    def family(self, name):
        n = name.encode() + b"\0"
        self._send(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, struct.pack("=HH", 4 + len(n), CTRL_ATTR_FAMILY_NAME) + n)
        # One answer and no end of it (no NLM_F_ACK asked): the first
        # message is all there is to read.
        return next(self._answers())[CTRL_ATTR_FAMILY_ID]

    def dump(self, fam, cmd, payload=b""):
        self._send(fam, NLM_F_DUMP, cmd, payload)
        return list(self._answers())


def main(judge):
    """Run JUDGE(genl) and print what it returns as JSON, or
    {"error": errno} when the kernel refuses (no family, no such command)."""
    try:
        out = judge(Genl())
    except Error as e:
        out = {"error": e.errno}
    print(json.dumps(out))
    sys.exit(0)
