"""An experiment report's Markdown (the subset report.md uses) as one HTML
page, its plots and CSV files embedded as data URIs, so the page opens in a
browser with no server. Beside lockstep-report.py (installed next to it as
lockstep_report_html.py), which draws the plots first.
"""

import base64
import html
import os
import re


def data_uri(path, mime):
    with open(path, "rb") as f:
        return "data:%s;base64,%s" % (mime, base64.b64encode(f.read()).decode())


def inline(text, base):
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)

    def link(m):
        target = m.group(2)
        path = os.path.join(base, target)
        if target.endswith(".csv") and os.path.exists(path):
            return '<a download="%s" href="%s">%s</a>' % (
                os.path.basename(target), data_uri(path, "text/csv"),
                m.group(1))
        return '<a href="%s">%s</a>' % (target, m.group(1))

    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", link, text)


def table_html(lines, base):
    cells = [[c.strip() for c in l.strip().strip("|").split("|")] for l in lines]
    out = ["<table><thead><tr>"]
    out += ["<th>%s</th>" % inline(c, base) for c in cells[0]]
    out.append("</tr></thead><tbody>")
    for row in cells[2:]:
        out.append("<tr>" + "".join("<td>%s</td>" % inline(c, base)
                                    for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def markdown_html(md, base):
    out, lines, i = [], md.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>%s</pre>" % html.escape("\n".join(lines[i + 1:j])))
            i = j + 1
        elif line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append(table_html(lines[i:j], base))
            i = j
        elif m := re.match(r"^(#{1,3}) (.*)", line):
            level = len(m.group(1))
            out.append("<h%d>%s</h%d>" % (level, inline(m.group(2), base),
                                          level))
            i += 1
        elif m := re.match(r"^!\[([^\]]*)\]\(([^)]+)\)$", line):
            path = os.path.join(base, m.group(2))
            src = data_uri(path, "image/png") if os.path.exists(path) else ""
            out.append('<figure><img alt="%s" src="%s"><figcaption>%s'
                       "</figcaption></figure>" % (html.escape(m.group(1)),
                                                   src,
                                                   html.escape(m.group(1))))
            i += 1
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append("<li>%s</li>" % inline(lines[i][2:], base))
                i += 1
            out.append("<ul>%s</ul>" % "".join(items))
        elif line.strip():
            j = i
            while (j < len(lines) and lines[j].strip() and
                   not re.match(r"^(#|\||```|!\[|- )", lines[j])):
                j += 1
            out.append("<p>%s</p>" % inline(" ".join(lines[i:j]), base))
            i = j
        else:
            i += 1
    return "\n".join(out)


STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right;
         white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f0f0f0; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto;
      font-size: 0.8em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #555; }
"""


# Once the page has loaded, its title says how many plots the browser could
# draw ("name [5/5 plots]"): scripts/check-report.sh reads it.
COUNT_PLOTS = """<script>
window.addEventListener("load", function () {
  var imgs = Array.from(document.images);
  var drawn = imgs.filter(function (i) {
    return i.complete && i.naturalWidth > 0;
  }).length;
  document.title += " [" + drawn + "/" + imgs.length + " plots]";
});
</script>
"""


def page(title, md, base):
    """report.md as one HTML page: its plots and CSV files embedded, and a
    title that says how many plots the browser drew."""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>%s</title><style>%s</style></head><body>\n%s\n%s"
            "</body></html>\n" % (html.escape(title), STYLE,
                                   markdown_html(md, base), COUNT_PLOTS))
