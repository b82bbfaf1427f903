"""Prototype: replace the linear segment walk in a generated source by walk-then-gallop (same segment)."""
import re

PAT = re.compile(r"^(?P<x> *)k = min\(max\((?P<slot>[^,]+), 0\), m - 2\)\n"
                 r"(?P=x)while k < m - 2 and HT\[k \+ 1\] <= tsel:\n(?P=x)    k \+= 1\n"
                 r"(?P=x)while k > 0 and HT\[k\] > tsel:\n(?P=x)    k -= 1\n", re.M)


def block(x, slot):
    L = [f"k = min(max({slot}, 0), m - 2)",
         "if k < m - 2 and HT[k + 1] <= tsel:",
         "    klo = k + 1",
         "    khi = klo + 1",
         "    kst = 1",
         "    while khi <= m - 2 and HT[khi] <= tsel:",
         "        klo = khi",
         "        kst *= 2",
         "        khi = klo + kst",
         "    if khi > m - 1:",
         "        khi = m - 1",
         "    while khi - klo > 1:",
         "        kmid = (klo + khi) >> 1",
         "        if HT[kmid] <= tsel:",
         "            klo = kmid",
         "        else:",
         "            khi = kmid",
         "    k = klo",
         "elif k > 0 and HT[k] > tsel:",
         "    khi = k",
         "    klo = k - 1",
         "    kst = 1",
         "    while klo > 0 and HT[klo] > tsel:",
         "        khi = klo",
         "        kst *= 2",
         "        klo = khi - kst",
         "    if klo < 0:",
         "        klo = 0",
         "    while khi - klo > 1:",
         "        kmid = (klo + khi) >> 1",
         "        if HT[kmid] <= tsel:",
         "            klo = kmid",
         "        else:",
         "            khi = kmid",
         "    k = klo"]
    return "".join(x + s + "\n" for s in L)


def patch(src):
    out, n = PAT.subn(lambda mt: block(mt.group("x"), mt.group("slot")), src)
    return out, n


def block_bl(x, slot):
    """branchless one node forward / back, then the search only if it must move farther"""
    L = [f"k = min(max({slot}, 0), m - 2)",
         "k += int((k < m - 2) & (HT[k + 1] <= tsel))",
         "k -= int((k > 0) & (HT[k] > tsel))",
         "if (k < m - 2 and HT[k + 1] <= tsel) or (k > 0 and HT[k] > tsel):",
         "    while k < m - 2 and HT[k + 1] <= tsel:",
         "        k += 1",
         "    while k > 0 and HT[k] > tsel:",
         "        k -= 1"]
    return "".join(x + s + "\n" for s in L)


def patch_bl(src):
    return PAT.subn(lambda mt: block_bl(mt.group("x"), mt.group("slot")), src)
