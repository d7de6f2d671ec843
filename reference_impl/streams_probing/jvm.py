"""What Kafka Streams' ``SubscriptionInfo`` / ``AssignmentInfo`` get from the JVM, emulated byte for byte.

* Java's exceptions that the encodings let through (``IllegalArgumentException``, ``BufferUnderflowException``,
  ``NegativeArraySizeException``) and the ``IOException``\\ s that ``AssignmentInfo`` wraps.
* ``hashCode()`` of ``TaskId``, ``TopicPartition``, ``HostInfo`` and ``String``, and the iteration order of a
  ``java.util.HashMap`` / ``HashSet`` (``new HashMap<>()``, keys put in a given order), tree bins included:
  Kafka writes its task sets and maps in that order.
* ``DataOutputStream.writeUTF`` / ``DataInputStream.readUTF`` (modified UTF-8 over UTF-16 code units) and
  ``String.getBytes(UTF_8)`` / ``new String(bytes, UTF_8)``.

Checked against the JDK (OpenJDK 17 and 25: ``java.util.HashSet`` / ``HashMap`` with Kafka 2.0's ``TaskId`` /
``TopicPartition`` / ``HostInfo`` classes, ``DataInputStream``, ``String``) on thousands of random inputs; a
sample of the JDK's answers is kept in tests/data/streams_probing_jvm.json for the tests.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any


class IllegalArgumentException(ValueError):
    """Java's ``IllegalArgumentException`` (the version check of a constructor, a negative capacity)."""


class BufferUnderflowException(Exception):
    """``java.nio.BufferUnderflowException``: ``SubscriptionInfo.decode`` reads past the end of its buffer."""


class NegativeArraySizeException(Exception):
    """``new byte[n]`` with ``n`` < 0 (a negative user-endpoint length in a subscription)."""


class IOException(Exception):
    """``java.io.IOException``: what ``AssignmentInfo`` wraps into a ``TaskAssignmentException``."""


class EOFException(IOException):
    """``DataInputStream`` ran out of bytes."""


class UTFDataFormatException(IOException):
    """``readUTF`` met malformed modified UTF-8, or ``writeUTF`` a string over 65535 encoded bytes."""


# ------------------------------------------------------------------------------------------ hash codes


def int32(x: int) -> int:
    """Java's ``(int)`` narrowing: the low 32 bits, signed."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def utf16_units(s: str) -> tuple[int, ...]:
    """The ``char``\\ s of the Java string ``s`` (a supplementary character is two surrogates)."""
    raw = s.encode("utf-16-be", "surrogatepass")
    return struct.unpack(f">{len(raw) // 2}H", raw)


def from_utf16_units(units: Sequence[int]) -> str:
    """The Python string of Java ``char``\\ s: surrogate pairs join, a lone surrogate stays one."""
    return struct.pack(f">{len(units)}H", *units).decode("utf-16-be", "surrogatepass")


def string_hash(s: str) -> int:
    """``String.hashCode()``: s[0]*31^(n-1) + ... over UTF-16 code units."""
    h = 0
    for unit in utf16_units(s):
        h = (31 * h + unit) & 0xFFFFFFFF
    return int32(h)


def task_id_hash(topic_group_id: int, partition: int) -> int:
    """Kafka 2.0's ``TaskId.hashCode()``: ``(int) ((((long) topicGroupId << 32) | (long) partition) % 0xFFFFFFFFL)``."""
    mask = (1 << 64) - 1
    n = ((topic_group_id << 32) & mask) | (partition & mask)  # (long) partition sign-extends
    if n >= 1 << 63:
        n -= 1 << 64
    rem = abs(n) % 0xFFFFFFFF  # Java's % truncates toward zero: the sign of the dividend
    return int32(-rem if n < 0 else rem)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return int32(31 * int32(31 + partition) + string_hash(topic))


def host_info_hash(host: str, port: int) -> int:
    """``HostInfo.hashCode()``: ``31 * host.hashCode() + port``."""
    return int32(31 * string_hash(host) + port)


# ------------------------------------------------------------------------------------------ java.util.HashMap

_TREEIFY_THRESHOLD, _UNTREEIFY_THRESHOLD, _MIN_TREEIFY_CAPACITY = 8, 6, 64


class _Node:
    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right", "tree")

    def __init__(self, h: int, key: Any, nxt: _Node | None = None) -> None:
        self.hash, self.key, self.next = h, key, nxt
        self.tree = False
        self.prev: _Node | None = None
        self.parent: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.red = False


class _HashMap:
    """``java.util.HashMap``'s key placement (JDK 8 and later): a table of bins that doubles past 0.75 load,
    bins of 8+ keys turned into red-black trees once the table has 64 slots (``TreeNode``), iteration in bin
    order following each bin's ``next`` links. Only what ``put`` of new keys and iteration need."""

    def __init__(self, hash_code: Callable[[Any], int], compare: Callable[[Any, Any], int] | None) -> None:
        self.hash_code = hash_code
        self.compare = compare  # compareTo of a Comparable key class, None for TopicPartition / HostInfo
        self.table: list[_Node | None] = []
        self.size = 0
        self.threshold = 0

    def _hash(self, key: Any) -> int:
        h = self.hash_code(key) & 0xFFFFFFFF
        return int32(h ^ (h >> 16))  # HashMap.hash: h ^ (h >>> 16)

    def _dir(self, k: Any, pk: Any) -> int:
        c = self.compare(k, pk) if self.compare is not None else 0
        # tieBreakOrder: class names, then System.identityHashCode, which no emulation can know: a key
        # without compareTo whose full hash equals another's in a tree bin has no fixed order in Java either.
        return c if c != 0 else -1

    def put(self, key: Any) -> None:
        if not self.table:
            self._resize()
        tab = self.table
        h = self._hash(key)
        i = (len(tab) - 1) & h
        p = tab[i]
        if p is None:
            tab[i] = _Node(h, key)
        elif p.hash == h and p.key == key:
            return
        elif p.tree:
            if not self._put_tree_val(tab, p, h, key):
                return
        else:
            bin_count = 0
            while True:
                e = p.next
                if e is None:
                    p.next = _Node(h, key)
                    if bin_count >= _TREEIFY_THRESHOLD - 1:
                        self._treeify_bin(tab, h)
                    break
                if e.hash == h and e.key == key:
                    return
                p = e
                bin_count += 1
        self.size += 1
        if self.size > self.threshold:
            self._resize()

    def keys(self) -> list[Any]:
        out = []
        for e in self.table:
            while e is not None:
                out.append(e.key)
                e = e.next
        return out

    def _resize(self) -> None:
        old = self.table
        old_cap = len(old)
        if old_cap > 0:
            new_cap = old_cap << 1
            new_thr = self.threshold << 1 if old_cap >= 16 else int(new_cap * 0.75)
        else:
            new_cap, new_thr = 16, 12
        self.threshold = new_thr
        tab: list[_Node | None] = [None] * new_cap
        self.table = tab
        for j, e in enumerate(old):
            if e is None:
                continue
            old[j] = None
            if e.next is None:
                tab[e.hash & (new_cap - 1)] = e
            elif e.tree:
                self._split(e, tab, j, old_cap)
            else:
                lo, hi = self._partition(e, old_cap)
                tab[j] = lo[0] if lo else None
                tab[j + old_cap] = hi[0] if hi else None

    @staticmethod
    def _partition(e: _Node | None, bit: int) -> tuple[list[_Node], list[_Node]]:
        """Split a bin into the keys staying at its index and those moving up by ``bit``, order kept."""
        lo: list[_Node] = []
        hi: list[_Node] = []
        while e is not None:
            nxt = e.next
            e.next = None
            side = lo if e.hash & bit == 0 else hi
            e.prev = side[-1] if side else None
            if side:
                side[-1].next = e
            side.append(e)
            e = nxt
        return lo, hi

    def _split(self, b: _Node, tab: list[_Node | None], index: int, bit: int) -> None:
        lo, hi = self._partition(b, bit)
        for nodes, at, other in ((lo, index, hi), (hi, index + bit, lo)):
            if not nodes:
                continue
            if len(nodes) <= _UNTREEIFY_THRESHOLD:
                for n in nodes:  # untreeify: plain nodes, same order
                    n.tree = False
                    n.prev = n.parent = n.left = n.right = None
                tab[at] = nodes[0]
            else:
                tab[at] = nodes[0]
                if other:
                    self._treeify(tab, nodes[0])

    def _treeify_bin(self, tab: list[_Node | None], h: int) -> None:
        if len(tab) < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        e = tab[(len(tab) - 1) & h]
        prev = None
        hd = e
        while e is not None:
            e.tree, e.prev = True, prev
            prev = e
            e = e.next
        if hd is not None:
            self._treeify(tab, hd)

    def _treeify(self, tab: list[_Node | None], head: _Node) -> None:
        root: _Node | None = None
        x: _Node | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent, x.red, root = None, False, x
            else:
                p = root
                while True:
                    d = -1 if p.hash > x.hash else 1 if p.hash < x.hash else self._dir(x.key, p.key)
                    xp = p
                    child = p.left if d <= 0 else p.right
                    if child is None:
                        x.parent = xp
                        if d <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        assert root is not None
        _move_root_to_front(tab, root)

    def _put_tree_val(self, tab: list[_Node | None], first: _Node, h: int, k: Any) -> bool:
        """Insert ``k`` into a tree bin; False if it is there already."""
        root = first
        while root.parent is not None:
            root = root.parent
        p = root
        while True:
            if p.hash > h:
                d = -1
            elif p.hash < h:
                d = 1
            elif p.key == k:
                return False
            else:
                if _find(p.left, h, k) or _find(p.right, h, k):
                    return False
                d = self._dir(k, p.key)
            xp = p
            child = p.left if d <= 0 else p.right
            if child is None:
                xpn = xp.next
                x = _Node(h, k, xpn)
                x.tree = True
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                _move_root_to_front(tab, _balance_insertion(root, x))
                return True
            p = child


def _find(p: _Node | None, h: int, k: Any) -> bool:
    if p is None:
        return False
    return (p.hash == h and p.key == k) or _find(p.left, h, k) or _find(p.right, h, k)


def _move_root_to_front(tab: list[_Node | None], root: _Node) -> None:
    index = (len(tab) - 1) & root.hash
    first = tab[index]
    if root is not first:
        tab[index] = root
        rp, rn = root.prev, root.next
        if rn is not None:
            rn.prev = rp
        if rp is not None:
            rp.next = rn
        if first is not None:
            first.prev = root
        root.next = first
        root.prev = None


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    left = p.left
    if left is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """``HashMap.TreeNode.balanceInsertion`` (CLR red-black insertion, as the JDK writes it)."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def hash_order(keys: Iterable[Any], hash_code: Callable[[Any], int],
               compare: Callable[[Any, Any], int] | None = None) -> list[Any]:
    """The iteration order of ``new HashMap<>()`` / ``new HashSet<>()`` after putting ``keys`` in this order
    (a key put again keeps its place). ``compare`` is the keys' ``compareTo`` if their class is ``Comparable``
    (it orders keys of equal hash inside a tree bin)."""
    m = _HashMap(hash_code, compare)
    for k in keys:
        m.put(k)
    return m.keys()


# ------------------------------------------------------------------------------------------ strings


def write_utf(s: str) -> bytes:
    """``DataOutputStream.writeUTF``: an unsigned 16-bit length, then each ``char`` as 1 byte (1..0x7F),
    2 bytes (0 and up to 0x7FF) or 3 bytes (the rest, each surrogate on its own)."""
    out = bytearray()
    for c in utf16_units(s):
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    if len(out) > 0xFFFF:
        raise UTFDataFormatException(f"encoded string too long: {len(out)} bytes")
    return struct.pack(">H", len(out)) + bytes(out)


def read_utf(raw: bytes) -> str:
    """``DataInputStream.readUTF``'s decoding of ``raw`` (the bytes after the length): only the 1-, 2- and
    3-byte forms, no check for overlong forms (``c1 81`` is "A") or surrogates (``ed a0 80`` is one)."""
    units: list[int] = []
    count, n = 0, len(raw)
    while count < n:
        c = raw[count]
        top = c >> 4
        if top <= 7:
            count += 1
            units.append(c)
        elif top in (12, 13):
            count += 2
            if count > n:
                raise UTFDataFormatException("malformed input: partial character at end")
            c2 = raw[count - 1]
            if c2 & 0xC0 != 0x80:
                raise UTFDataFormatException(f"malformed input around byte {count}")
            units.append(((c & 0x1F) << 6) | (c2 & 0x3F))
        elif top == 14:
            count += 3
            if count > n:
                raise UTFDataFormatException("malformed input: partial character at end")
            c2, c3 = raw[count - 2], raw[count - 1]
            if c2 & 0xC0 != 0x80 or c3 & 0xC0 != 0x80:
                raise UTFDataFormatException(f"malformed input around byte {count - 1}")
            units.append(((c & 0x0F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F))
        else:  # 10xx xxxx, 1111 xxxx: 4-byte UTF-8 is malformed here
            raise UTFDataFormatException(f"malformed input around byte {count}")
    return from_utf16_units(units)


def utf8_bytes(s: str) -> bytes:
    """``String.getBytes(UTF_8)``: standard UTF-8, a lone surrogate replaced by ``?``."""
    return from_utf16_units(utf16_units(s)).encode("utf-8", "replace")


def utf8_string(raw: bytes) -> str:
    """``new String(bytes, UTF_8)``: malformed input replaced by U+FFFD as the JDK's decoder does it
    (``String.decodeUTF8_UTF16``, the rules of ``sun.nio.cs.UTF_8``): a lead byte with too few continuation
    bytes counts as one malformed sequence, an encoded surrogate (``ed a0 80``) as one, not three."""
    repl = 0xFFFD
    units: list[int] = []
    sp, sl = 0, len(raw)

    def cont(b: int) -> bool:
        return b & 0xC0 == 0x80

    while sp < sl:
        b1 = raw[sp]
        sp += 1
        if b1 < 0x80:
            units.append(b1)
        elif b1 >> 5 == 0b110 and b1 & 0x1E:  # 2 bytes, not the overlong c0 / c1
            if sp < sl:
                b2 = raw[sp]
                sp += 1
                if not cont(b2):
                    units.append(repl)
                    sp -= 1
                else:
                    units.append(((b1 & 0x1F) << 6) | (b2 & 0x3F))
                continue
            units.append(repl)
            break
        elif b1 >> 4 == 0b1110:
            if sp + 1 < sl:
                b2, b3 = raw[sp], raw[sp + 1]
                sp += 2
                if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not cont(b2) or not cont(b3):  # isMalformed3
                    units.append(repl)
                    sp -= 3
                    sp += 1 if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not cont(b2) else 2  # malformed3
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    units.append(repl if 0xD800 <= c <= 0xDFFF else c)
                continue
            if sp < sl and ((b1 == 0xE0 and raw[sp] & 0xE0 == 0x80) or not cont(raw[sp])):  # isMalformed3_2
                units.append(repl)
                continue
            units.append(repl)
            break
        elif b1 >> 3 == 0b11110:
            if sp + 2 < sl:
                b2, b3, b4 = raw[sp], raw[sp + 1], raw[sp + 2]
                sp += 3
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (cont(b2) and cont(b3) and cont(b4)) or not 0x10000 <= uc <= 0x10FFFF:
                    units.append(repl)
                    sp -= 4
                    if (b1 > 0xF4 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                            or (b1 == 0xF4 and b2 & 0xF0 != 0x80) or not cont(b2)):  # malformed4
                        sp += 1
                    else:
                        sp += 2 if not cont(b3) else 3
                else:
                    uc -= 0x10000
                    units += [0xD800 + (uc >> 10), 0xDC00 + (uc & 0x3FF)]
                continue
            if b1 > 0xF4 or (sp < sl and ((b1 == 0xF0 and not 0x90 <= raw[sp] <= 0xBF)
                                          or (b1 == 0xF4 and raw[sp] & 0xF0 != 0x80) or not cont(raw[sp]))):
                units.append(repl)
                continue
            sp += 1
            units.append(repl)
            if sp < sl and not cont(raw[sp]):
                continue
            break
        else:
            units.append(repl)
    return from_utf16_units(units)
