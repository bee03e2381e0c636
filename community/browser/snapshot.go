package browser

import (
	"fmt"
	"strings"
)

// Bounds of a snapshot, as DeerFlow's: at most maxElements elements, each
// name at most maxNameChars characters; the title at most maxTitleChars.
const (
	maxElements   = 200
	maxNameChars  = 120
	maxTitleChars = 300
	maxURLChars   = 2000
)

// refAttr is the attribute a snapshot stamps on the elements it lists;
// the model addresses them by its number.
const refAttr = "data-antler-ref"

// snapshotJS lists the visible interactive elements of the page and
// stamps each with its number, after removing the stamps of the previous
// snapshot (a stale node kept by a single-page app must not answer a
// later ref). It returns {url, title, elements: [{ref, tag, role, type,
// name}]}.
var snapshotJS = fmt.Sprintf(`(() => {
  const attr = %q, maxEls = %d, maxName = %d, maxTitle = %d;
  for (const old of document.querySelectorAll("[" + attr + "]")) old.removeAttribute(attr);
  const found = [];
  const sel = "a, button, input, textarea, select, [role=button], [role=link], [role=tab], [role=checkbox], [onclick], [contenteditable=true]";
  let n = 0;
  for (const el of document.querySelectorAll(sel)) {
    const box = el.getBoundingClientRect();
    const style = window.getComputedStyle(el);
    if (box.width <= 0 || box.height <= 0 || style.visibility === "hidden" || style.display === "none") continue;
    if (el.type === "hidden") continue;
    n++;
    el.setAttribute(attr, String(n));
    let name = (el.getAttribute("aria-label") || el.getAttribute("name") || el.getAttribute("placeholder") ||
      el.innerText || el.value || el.getAttribute("title") || "").replace(/\s+/g, " ").trim();
    if (name.length > maxName) name = name.slice(0, maxName) + "…";
    found.push({ref: n, tag: el.tagName.toLowerCase().slice(0, 40), role: (el.getAttribute("role") || "").slice(0, 40),
      type: (el.getAttribute("type") || "").slice(0, 40), name});
    if (found.length >= maxEls) break;
  }
  return {url: location.href, title: (document.title || "").slice(0, maxTitle), elements: found};
})()`, refAttr, maxElements, maxNameChars, maxTitleChars)

// pageSnapshot is what snapshotJS returns.
type pageSnapshot struct {
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Elements []element `json:"elements"`
}

type element struct {
	Ref  int    `json:"ref"`
	Tag  string `json:"tag"`
	Role string `json:"role"`
	Type string `json:"type"`
	Name string `json:"name"`
}

// render is the snapshot as the model reads it: the URL, the title and
// one "[ref] role type=...: name" line per element.
func (p pageSnapshot) render() string {
	var b strings.Builder
	u := p.URL
	if len(u) > maxURLChars {
		u = u[:maxURLChars] + "…"
	}
	fmt.Fprintf(&b, "URL: %s\nTitle: %s\n\n", u, p.Title)
	if len(p.Elements) == 0 {
		b.WriteString("No interactive elements detected.")
		return b.String()
	}
	b.WriteString("Interactive elements (address them by [ref] number):")
	for _, e := range p.Elements {
		label := e.Role
		if label == "" {
			label = e.Tag
		}
		detail := ""
		if e.Type != "" {
			detail = " type=" + e.Type
		}
		name := e.Name
		if name == "" {
			name = "(no text)"
		}
		fmt.Fprintf(&b, "\n[%d] %s%s: %s", e.Ref, label, detail, name)
	}
	return b.String()
}
