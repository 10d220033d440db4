"""Looking into a page in headless Chromium: run a script in it once it has loaded and read back
what the script found, and run axe-core (the accessibility checker) on it.

Chromium is driven as the other browser tests drive it: ``--dump-dom`` prints the page's DOM
once its scripts are done (``--virtual-time-budget`` lets a promise, as axe's, settle first).
The script under test writes its findings, base64 JSON, into an attribute of ``<html>``; nothing
else is needed (no DevTools connection, no driver package).

axe-core comes from the npm registry, as the browser comes from apt: installed on first use
into ``~/.cache/llm-grader-npm`` (``$XDG_CACHE_HOME`` respected) at the pinned version, kept
there for the next runs. Without npm, or offline, the axe tests skip and say why;
``GRADER_AXE_JS=/path/to/axe.min.js`` uses a copy of one's own.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="chromium is not installed (apt-get install chromium; .ci/run installs it as root)",
)

AXE_VERSION = "4.14.1"  # axe-core, pinned: a newer release may add rules
RESULT = "data-pagecheck"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-grader-npm"


def _installed(prefix: Path) -> Path | None:
    package = prefix / "node_modules" / "axe-core"
    try:
        version = json.loads((package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    script = package / "axe.min.js"
    return script if version == AXE_VERSION and script.is_file() else None


@functools.cache
def axe_source() -> str:
    """The text of ``axe.min.js``, installed with npm if it is not there yet; skips the test
    (with the reason) when it cannot be had."""
    own = os.environ.get("GRADER_AXE_JS")
    if own:
        return Path(own).read_text(encoding="utf-8")
    prefix = cache_dir()
    if (script := _installed(prefix)) is None:
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(
                "npm is not installed, so axe-core (the accessibility checker, from the "
                "npm registry) is not either: apt-get install npm, or set GRADER_AXE_JS "
                "to an axe.min.js"
            )
        prefix.mkdir(parents=True, exist_ok=True)
        with open(prefix / ".lock", "w") as lock:  # one install for all test processes
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (script := _installed(prefix)) is None:
                proc = subprocess.run(
                    [
                        npm,
                        "install",
                        "--prefix",
                        str(prefix),
                        "--no-audit",
                        "--no-fund",
                        "--no-save",
                        "--loglevel=error",
                        f"axe-core@{AXE_VERSION}",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                script = _installed(prefix)
                if script is None:
                    pytest.skip(
                        f"could not install axe-core {AXE_VERSION} with npm (offline?): "
                        f"{(proc.stderr or proc.stdout).strip()[-300:]}"
                    )
    return script.read_text(encoding="utf-8")


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


# What the script under test calls with its findings (any JSON value).
REPORT = f"""<script>
function pagecheckReport(found) {{
  var text = JSON.stringify(found);
  document.documentElement.setAttribute("{RESULT}", btoa(unescape(encodeURIComponent(text))));
}}
</script>"""


def run_in_page(
    html: str, script: str, folder: Path, *flags: str, name: str = "page"
) -> tuple[object, subprocess.CompletedProcess]:
    """Load ``html`` (written to ``folder``) with ``script`` run after it, in headless
    Chromium; what the script passed to ``pagecheckReport``, and the browser's run."""
    at = html.rindex("</body>")
    page = folder / f"{name}.html"
    page.write_text(html[:at] + REPORT + f"<script>{script}</script>" + html[at:], "utf-8")
    profile = folder / f"profile-{name}-{len(list(folder.glob('profile-*')))}"
    proc = chromium(profile, "--virtual-time-budget=30000", *flags, "--dump-dom", page.as_uri())
    found = re.search(rf'<html[^>]*\s{RESULT}="([^"]*)"', proc.stdout)
    assert found, f"the page's script reported nothing: {proc.stderr[-2000:]}"
    return json.loads(base64.b64decode(found.group(1)).decode("utf-8")), proc


# Every rule axe runs by default: WCAG 2.0-2.2 A and AA and the best practices (the AAA rules
# and the experimental ones are off by default). Only violations and the undecided ("needs
# review") results come back, each node with axe's reason.
AXE_RUN = """
axe.run(document, {resultTypes: ["violations", "incomplete"]}).then(function (r) {
  function brief(list) {
    return list.map(function (rule) {
      return {id: rule.id, impact: rule.impact, help: rule.help, tags: rule.tags,
              nodes: rule.nodes.map(function (n) {
                var any = n.any[0] || n.all[0] || n.none[0] || {};
                return {target: n.target, html: n.html.slice(0, 200),
                        why: n.failureSummary || any.message || ""};
              })};
    });
  }
  pagecheckReport({violations: brief(r.violations), incomplete: brief(r.incomplete),
                   passes: r.passes.length});
}, function (e) { pagecheckReport({error: String(e)}); });
"""


def axe(html: str, folder: Path, *flags: str, name: str = "axe") -> dict:
    """axe-core's findings on ``html``: ``violations`` and ``incomplete`` (rules whose result
    axe could not decide), each a list of rules with their nodes."""
    found, proc = run_in_page(html, axe_source() + "\n" + AXE_RUN, folder, *flags, name=name)
    assert "error" not in found, found
    assert found["passes"] > 10, "axe ran no rule"
    return found


def counts(findings: list[dict]) -> dict[str, int]:
    """``{rule id: number of nodes}``: what an assertion message shows."""
    return {rule["id"]: len(rule["nodes"]) for rule in findings}


def explain(found: dict) -> str:
    """The violations and undecided results, one line per node, for a failure message."""
    lines = []
    for kind in ("violations", "incomplete"):
        for rule in found[kind]:
            for node in rule["nodes"][:5]:
                lines.append(
                    f"{kind} {rule['id']}: {node['target']} {node['html'][:120]!r} "
                    f"{node['why'][:200]!r}"
                )
    return "\n".join(lines)


# The words (runs of non-space characters) of the selected elements' text that are laid out over
# more than one line, a "|" where each new line starts: every <details> opened first, so that
# folded text is laid out too.
BROKEN_WORDS = """
function brokenWords(selector) {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  function top(node, start, end) {
    var range = document.createRange();
    range.setStart(node, start);
    range.setEnd(node, end);
    var rects = Array.prototype.filter.call(range.getClientRects(),
                                            function (r) { return r.width > 0; });
    return rects.length ? rects.map(function (r) { return Math.round(r.top); }) : [];
  }
  var broken = [];
  document.querySelectorAll(selector).forEach(function (el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      var word = /\\S+/g, m;
      while ((m = word.exec(node.data))) {
        var tops = top(node, m.index, m.index + m[0].length);
        if (Math.min.apply(null, tops) === Math.max.apply(null, tops)) { continue; }
        var marked = "", line = null;
        for (var i = 0; i < m[0].length; i++) {
          var t = top(node, m.index + i, m.index + i + 1)[0];
          if (line !== null && t !== undefined && t !== line) { marked += "|"; }
          if (t !== undefined) { line = t; }
          marked += m[0][i];
        }
        broken.push(marked);
      }
    }
  });
  return broken;
}
"""

# The rules of the page's @media print blocks, applied to the screen too: the page as printed.
AS_PRINTED = """
(function () {
  var rules = [];
  Array.prototype.forEach.call(document.styleSheets, function (sheet) {
    Array.prototype.forEach.call(sheet.cssRules, function (rule) {
      if (rule.media && rule.media.mediaText === "print") {
        Array.prototype.forEach.call(rule.cssRules, function (r) { rules.push(r.cssText); });
      }
    });
  });
  var style = document.createElement("style");
  style.textContent = rules.join("\\n");
  document.head.appendChild(style);
}());
"""
