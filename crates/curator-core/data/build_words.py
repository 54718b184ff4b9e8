#!/usr/bin/env python3
"""Rebuild words.txt (the observation-id word list) from Debian's `scowl` package.

Usage: apt-get install -y scowl && python3 build_words.py > words.txt

Deterministic: the same SCOWL release always gives the same 4,096 words. See README.md for why
each step exists.
"""
import sys

SCOWL = "/usr/share/dict/scowl"
# SCOWL size levels 10 and 20 are its most common English words.
SOURCES = ["english-words.10", "english-words.20", "american-words.10", "american-words.20"]
TARGET = 4096

# Words that would be unpleasant or alarming to see inside an id printed in a CI log or a review:
# violence, sex, slurs, insults, religion, drugs. A word is also dropped when it is one of these
# plus a plain suffix (kills, killer, killed).
BLOCK = set("""
abuse ass balls bible bitch bloody blood bomb bullet cancer church corpse crap cult damn dead death
devil die dies died drug drunk evil fat gay god gun hate hell idiot kill lord murder naked nude
nazi poison porn pray racist rape riot sex sexual sexy shoot sin slave stupid terror ugly victim
virgin vomit war weapon whore penis breast suicide dumb fool fools foolish jail prison crime
criminal thief thieve steal stolen rob robber burglar hang hanged knife stab torture bury buried
slaughter wound wounded enemy assault attack destroy fight violent violence panic disease sick
heroin liquor lust moron sexist filthy freak insane crazy curse nasty vile
""".split())
SUFFIXES = ("", "s", "es", "ed", "d", "er", "ers", "ing", "ly")


def blocked(word):
    return any(word.endswith(s) and word[: len(word) - len(s)] in BLOCK for s in SUFFIXES)


def main():
    words = set()
    for name in SOURCES:
        with open(f"{SCOWL}/{name}", encoding="utf-8") as f:
            for line in f:
                w = line.strip()
                if 3 <= len(w) <= 6 and w.isascii() and w.isalpha() and w.islower():
                    words.add(w)
    words = {w for w in words if not blocked(w)}
    # Too many: drop plain plurals whose singular is kept (they add little memorability), longest
    # first, then alphabetically, until exactly TARGET remain.
    plurals = sorted((w for w in words if w.endswith("s") and w[:-1] in words),
                     key=lambda w: (-len(w), w))
    excess = len(words) - TARGET
    if excess < 0 or excess > len(plurals):
        sys.exit(f"cannot reach {TARGET} words from {len(words)} candidates")
    words -= set(plurals[:excess])
    assert len(words) == TARGET
    sys.stdout.write("".join(w + "\n" for w in sorted(words)))


if __name__ == "__main__":
    main()
