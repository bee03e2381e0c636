package search

import (
	"strings"
	"sync"
)

// pathRole is what a request does with a file path it mentions: the
// path is the object of a verb, and the verb says whether the file is
// written ("save it to /root/notes.md") or read ("read /root/data.xlsx").
type pathRole uint8

const (
	roleNone  pathRole = iota // no verb of either kind governs the path
	roleWrite                 // the request produces the file
	roleRead                  // the request consumes the file
)

// Verbs whose object is a file the request produces, or one it
// consumes, with their irregular forms. Generic verbs of both kinds
// ("process", "summarize", "use") are in neither list: their object may
// be the input or the output.
const (
	writeVerbs = "save write wrote written store export output put create generate draft make made produce dump persist"
	readVerbs  = "read open load parse import get got gotten view inspect analyze analyse extract convert"
)

// pathVerbs maps every form of each verb above (save, saves, saved,
// saving) to its role, so a query's words are looked up as they are,
// without stemming. Like the lexicon it depends on no catalogue: built
// once per process, shared read-only.
var pathVerbs = sync.OnceValue(func() map[string]pathRole {
	out := make(map[string]pathRole)
	for role, verbs := range map[pathRole]string{roleWrite: writeVerbs, roleRead: readVerbs} {
		for v := range strings.FieldsSeq(verbs) {
			for _, form := range verbForms(v) {
				out[form] = role
			}
		}
	}
	return out
})

// verbForms returns v and its regular inflections: -s/-es, -ed/-d and
// -ing, with a final e dropped (saving) or a final consonant doubled
// (putting) where English may, and both where it is not clear.
func verbForms(v string) []string {
	forms := []string{v, v + "s", v + "es"}
	if strings.HasSuffix(v, "e") {
		return append(forms, v+"d", v[:len(v)-1]+"ing")
	}
	last := v[len(v)-1:]
	return append(forms, v+"ed", v+"ing", v+last+"ed", v+last+"ing")
}

// maxVerbDistance bounds how many words before a path its verb may be
// ("save the final summary as a Markdown report to /x.md": 8).
const maxVerbDistance = 12

// locators is what a query's file paths and web addresses say (see
// scanLocators).
type locators struct {
	url   bool // a web address
	path  bool // a file path
	write bool // a path the request writes
	read  bool // a path the request reads
}

// scanLocators finds a query's web addresses and file paths, and the
// roles its paths play, in one pass over its words. A path's role is
// that of the nearest verb of either list before it, in the same
// sentence and after any earlier path: "Read /a.xlsx, plot it and save
// it in /b.png" reads a.xlsx and writes b.png. A path no verb governs
// takes the role of the preposition right before it, if it says one
// ("translate it into /b.txt", "the lines from /a.log").
func scanLocators(query string) locators {
	var l locators
	if strings.IndexByte(query, '/') < 0 && strings.IndexByte(query, '.') < 0 {
		return l // neither a path nor an address: nothing to scan
	}
	verbs := pathVerbs()
	role, distance := roleNone, 0
	prev := "" // the word before the field
	var buf [maxVerbLen]byte
	for f := range strings.FieldsSeq(query) {
		w := strings.Trim(f, ",;:.!?()[]\"'")
		switch {
		case isURL(strings.TrimLeft(f, openers)):
			l.url = true
		case isPath(f):
			l.path = true
			if role == roleNone {
				role = prepositionRole(prev)
			}
			l.write = l.write || role == roleWrite
			l.read = l.read || role == roleRead
			role = roleNone
		default:
			if r, ok := lookupFold(verbs, w, buf[:0]); ok {
				role, distance = r, 0
			}
		}
		prev = w
		distance++
		if distance > maxVerbDistance || endsSentence(f) {
			role = roleNone
		}
	}
	return l
}

// prepositionRole is the role a path takes from the word right before
// it: a destination ("to", "into") is written, a source ("from") read.
func prepositionRole(w string) pathRole {
	switch {
	case strings.EqualFold(w, "to"), strings.EqualFold(w, "into"):
		return roleWrite
	case strings.EqualFold(w, "from"):
		return roleRead
	}
	return roleNone
}

// maxVerbLen bounds the verb forms of pathVerbs ("outputting" is 10).
const maxVerbLen = 16

// lookupFold looks w up in verbs case-insensitively, lowercasing it into
// buf (a word longer than maxVerbLen is no verb), so that a query's words
// are not copied.
func lookupFold(verbs map[string]pathRole, w string, buf []byte) (pathRole, bool) {
	if w == "" || len(w) > maxVerbLen {
		return roleNone, false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	r, ok := verbs[string(buf)]
	return r, ok
}

// isPath reports whether a whitespace-separated field of a query is a
// file path: absolute, home- or dot-relative ("/root/x.md", "~/notes",
// "./a.txt"), or a file name with a common extension, alone or in a
// relative folder ("report.md", "out/sales.csv"); also when quoted or
// bracketed ("`/root/x.md`", "(notes.txt)"). A web address is not one.
func isPath(f string) bool {
	f = strings.TrimLeft(f, openers)
	if len(f) > 2 && (f[0] == '/' || strings.HasPrefix(f, "~/") || strings.HasPrefix(f, "./")) {
		return true
	}
	f = strings.TrimRight(f, closers)
	if isURL(f) {
		return false // scanLocators tries isURL first; isPath stands alone too
	}
	dot := strings.LastIndexByte(f, '.')
	if dot <= 0 || f[dot-1] == '/' {
		return false
	}
	return isFileExtension(lowerASCII(f[dot+1:]))
}

// isFileExtension reports whether a lowercased extension makes a word a
// file name ("report.md"); a domain ("example.com") or a version ("v1.2")
// has none of them. js and ts are left out: "Node.js" and "Three.js" are
// names of libraries far more often than of files.
func isFileExtension(ext string) bool {
	switch ext {
	case "md", "txt", "csv", "tsv", "json", "jsonl", "yaml", "yml", "xml", "html", "htm",
		"pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "rtf", "tex", "bib",
		"log", "ini", "toml", "sql", "py", "go", "rs", "java", "c", "cpp", "h", "sh",
		"ipynb", "png", "jpg", "jpeg", "gif", "svg", "webp", "mp3", "wav", "mp4", "zip", "gz", "tar":
		return true
	}
	return false
}

// openers are the quotes and brackets a path or address may start with;
// closers those it may end with, and the punctuation after it.
const (
	openers = "\"'`([{<"
	closers = "\"'`)]}>.,;:!?"
)

// isURL reports whether a field, its opening quotes or brackets removed,
// is a web address: it has a scheme ("https://…") or starts with "www.".
func isURL(f string) bool {
	return strings.Contains(f, "://") || len(f) > 4 && strings.EqualFold(f[:4], "www.")
}

// endsSentence reports whether a field closes a sentence.
func endsSentence(f string) bool {
	return strings.HasSuffix(f, ".") || strings.HasSuffix(f, "?") || strings.HasSuffix(f, "!") || strings.HasSuffix(f, ";")
}

// appendPathTerms adds to a query's term groups what its file paths and
// web addresses imply: "url" for a web address (at pathFileWeight), and
// for a path "file" at pathFileWeight, or, when a verb or preposition
// says the path is written or read, "write" or "read" and "file" at
// pathRoleWeight.
func (ix *Index) appendPathTerms(out [][]qterm, query string) [][]qterm {
	if ix.p.pathFile <= 0 && ix.p.pathRole <= 0 {
		return out
	}
	l := scanLocators(query)
	add := func(term string, w float64) {
		if id, ok := ix.terms[term]; ok && w > 0 {
			out = append(out, []qterm{{id, w}})
		}
	}
	if l.url {
		add("url", ix.p.pathFile)
	}
	if !l.path {
		return out
	}
	file := ix.p.pathFile
	if (l.write || l.read) && ix.p.pathRole > 0 {
		file = max(file, ix.p.pathRole)
		if l.write {
			add("write", ix.p.pathRole)
		}
		if l.read {
			add("read", ix.p.pathRole)
		}
	}
	add("file", file)
	return out
}
