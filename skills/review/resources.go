package review

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/antlerhq/antler/skills"
)

// Resources is the package's resource graph: which file references
// which, and the resource files nothing references.
type Resources struct {
	Edges   []Edge   `json:"edges"`
	Nodes   []Node   `json:"nodes"`
	Orphans []string `json:"orphans"`
}

// Edge is a reference from Source to Target, both package paths.
type Edge struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Node is one file of the graph.
type Node struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

var (
	markdownLinkRe = regexp.MustCompile(`!?\[[^\]]*]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRe     = regexp.MustCompile("`([^`]+)`")
	// pathTokenRe matches a bare resource path; a match must also not
	// follow a word character, '.', '/' or '-' (checked in code: RE2 has
	// no look-behind).
	pathTokenRe = regexp.MustCompile(`(?:references|scripts|templates|assets|evals)/[A-Za-z0-9._~/%+-]+`)
	schemeRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// resourceDirs are the top-level folders whose files should be reachable
// by reference; the two eval manifests are exempt.
var (
	resourceDirs   = []string{"references", "scripts", "templates", "assets", "evals"}
	unreferencedOK = []string{"evals/evals.json", "evals/trigger_eval_set.json"}
)

// escapesSentinel is what resolveReference returns for a reference out
// of the package (a NUL byte: no package path holds one).
const escapesSentinel = "\x00escapes"

// maxRefsPerFile bounds the references taken from one file, and
// maxRefsPerPackage those of the whole package (Antler's bounds: each
// reference may become an edge or a finding). A package over the second
// has its graph marked incomplete.
const (
	maxRefsPerFile    = 10_000
	maxRefsPerPackage = 50_000
)

// buildResources returns the resource graph and its findings: missing
// targets, references out of the package, unreferenced resources. Text
// files under eval fixtures are not read (they are test data).
//
// complete is false when the package held more than maxRefsPerPackage
// references and the rest were not followed.
func buildResources(s *Snapshot, files map[string]File) (g Resources, out []Finding, complete bool) {
	g = Resources{Nodes: []Node{}, Edges: []Edge{}, Orphans: []string{}}
	complete = true
	refs := 0
	for _, f := range s.Files {
		g.Nodes = append(g.Nodes, Node{Path: f.Path, Kind: f.Kind})
	}
	edges := map[Edge]bool{}
	missing := map[Edge]bool{}  // Target: the resolved missing path
	escaping := map[Edge]bool{} // Target: the reference as written
	for _, f := range s.Files {
		if f.Kind != KindText || f.Content == nil || skills.IsEvalFixturePath(f.Path) {
			continue
		}
		for _, ref := range extractReferences(*f.Content) {
			if refs++; refs > maxRefsPerPackage {
				complete = false
				break
			}
			resolved, ok := resolveReference(f.Path, ref)
			switch {
			case !ok:
			case resolved == escapesSentinel:
				escaping[Edge{f.Path, ref}] = true
			case files[resolved].Path != "":
				edges[Edge{f.Path, resolved}] = true
			default:
				missing[Edge{f.Path, resolved}] = true
			}
		}
	}
	referenced := map[string]bool{}
	for e := range edges {
		referenced[e.Target] = true
	}
	for _, f := range s.Files {
		top, _, _ := strings.Cut(f.Path, "/")
		if slices.Contains(resourceDirs, top) && !referenced[f.Path] &&
			!slices.Contains(unreferencedOK, f.Path) && !skills.IsEvalFixturePath(f.Path) {
			g.Orphans = append(g.Orphans, f.Path)
		}
	}
	slices.Sort(g.Orphans)
	g.Edges = sortedEdges(edges)
	for _, e := range sortedEdges(missing) {
		f := finding("resource.missing", SeverityWarning, e.Source, "Referenced resource does not exist: "+e.Target,
			"Add the referenced file, correct the path, or remove the stale reference.")
		f.Evidence = e.Target
		out = append(out, f)
	}
	for _, e := range sortedEdges(escaping) {
		f := finding("resource.escaping-link", SeverityWarning, e.Source, "Reference escapes the package boundary: "+e.Target,
			"Keep skill references package-relative and inside the skill directory.")
		f.Evidence = e.Target
		out = append(out, f)
	}
	for _, o := range g.Orphans {
		out = append(out, finding("resource.unreferenced", SeverityWarning, o,
			"Resource is not reachable from SKILL.md or another referenced resource.",
			"Reference the file with read-when guidance or remove it from the package."))
	}
	return g, out, complete
}

func sortedEdges(set map[Edge]bool) []Edge {
	out := make([]Edge, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Target, b.Target))
	})
	return out
}

// extractReferences returns the distinct references of a text: Markdown
// link targets (without #fragment), code spans holding a '/', and bare
// resource paths; at most maxRefsPerFile of them.
func extractReferences(content string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(r string) {
		if !seen[r] && len(out) < maxRefsPerFile {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, m := range markdownLinkRe.FindAllStringSubmatch(content, maxRefsPerFile) {
		target, _, _ := strings.Cut(m[1], "#")
		add(target)
	}
	for _, m := range codeSpanRe.FindAllStringSubmatch(content, maxRefsPerFile) {
		if tok := strings.TrimSpace(m[1]); strings.Contains(tok, "/") {
			add(tok)
		}
	}
	for _, tok := range pathTokens(content) {
		add(tok)
	}
	return out
}

// pathTokens finds the bare resource paths as a regular expression with
// the look-behind (?<![\w./-]) would: a match preceded by such a
// character is dropped and the search resumes one byte after its start.
func pathTokens(content string) []string {
	var out []string
	for off := 0; off < len(content) && len(out) < maxRefsPerFile; {
		loc := pathTokenRe.FindStringIndex(content[off:])
		if loc == nil {
			break
		}
		start, end := off+loc[0], off+loc[1]
		if r, _ := utf8.DecodeLastRuneInString(content[:start]); start > 0 && isTokenPrefix(r) {
			off = start + 1
			continue
		}
		out = append(out, content[start:end])
		off = end
	}
	return out
}

// isTokenPrefix reports a character a bare path may not follow: a word
// character as Python's \w (letters and numbers of any script, '_'),
// '.', '/' or '-'.
func isTokenPrefix(r rune) bool {
	return r == '_' || r == '.' || r == '/' || r == '-' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// resolveReference maps a reference in the file at source to a package
// path. ok is false for references that are not package paths (empty,
// fragments, URLs and other schemes); escapesSentinel is returned for an
// absolute reference or one that climbs out of the package.
func resolveReference(source, raw string) (resolved string, ok bool) {
	ref := strings.Trim(strings.TrimSpace(raw), `"'`)
	if ref == "" || strings.HasPrefix(ref, "#") || schemeRe.MatchString(ref) {
		return "", false
	}
	if strings.HasPrefix(ref, "/") {
		return escapesSentinel, true
	}
	if strings.Contains(ref, "://") {
		return "", false
	}
	candidate := ref
	if dir := path.Dir(source); dir != "." {
		candidate = dir + "/" + ref
	}
	p, err := NormalizePath(candidate)
	if err != nil {
		return escapesSentinel, true
	}
	return p, true
}
