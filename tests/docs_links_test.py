#!/usr/bin/env python3
"""The README and docs/ as a reader meets them: every relative link resolves
to a file or folder of the repository (none leaves its tree, none points to
../shared), every document in docs/ and docs/results/ is listed in the index
docs/README.md, and the README's results table is what docs/results gives
(scripts/readme_results.py --check).

    docs_links_test.py REPO_ROOT
"""
import glob
import os
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def main():
    root = os.path.realpath(sys.argv[1])
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    failures, links = [], 0
    for doc in docs:
        text = open(doc).read()
        rel = os.path.relpath(doc, root)
        if "../shared" in text:
            failures.append(f"{rel} mentions ../shared, which a clone does not have")
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            links += 1
            path = os.path.realpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
            if not path.startswith(root + os.sep) and path != root:
                failures.append(f"{rel}: link {target} leaves the repository")
            elif not os.path.exists(path):
                failures.append(f"{rel}: link {target} names nothing")
    index = open(os.path.join(root, "docs", "README.md")).read()
    listed = {os.path.normpath(t) for t in LINK.findall(index)}
    for doc in docs[1:]:
        rel = os.path.relpath(doc, os.path.join(root, "docs"))
        if rel != "README.md" and os.path.dirname(rel) in ("", "results") and rel not in listed:
            failures.append(f"docs/{rel} is not in the index docs/README.md")
    r = subprocess.run([sys.executable, os.path.join(root, "scripts", "readme_results.py"), "--check"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("README.md's results table: " + r.stderr.strip())
    for f in failures:
        print("FAIL:", f)
    print(f"{links} links in {len(docs)} documents; {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
