"""What the end-to-end drivers (run.py, plugin.py) share: reading their processes' output and
formatting task lists. Process control stays in each driver, which knows its own work directory."""

import json
import subprocess
from pathlib import Path


def tail(path, n):
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(keepends=True)[-n:])
    except OSError as e:
        return f"({e})\n"


def run(argv, timeout):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout, result.stderr


def json_lines(path):
    rows = []
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return rows
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def held(states, name, kind):
    return set(states.get(name, {}).get(kind, []))


def fmt(tasks):
    return ",".join(sorted(tasks)) or "-"
