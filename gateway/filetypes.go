package gateway

import (
	"net/http"
	"path"
	"strings"
)

// How the artifacts route types a file. Files are written by the agent (or
// uploaded by anyone with the thread), so the route never lets the browser
// sniff, and never serves a type a browser runs as a page (HTML, XHTML,
// XML, SVG, JavaScript, Flash, HTA, MHTML, XUL, WebAssembly...): only the
// passive types below may be inline, and everything else is an attachment
// of type application/octet-stream. docs/api.md gives the rules.

// Content-Security-Policy values of the file routes. Every response of
// the artifacts and uploads routes carries one. cspFile forbids script
// (sandbox without allow-scripts, and default-src 'none') and every load
// but the file itself, as an image or media document shows it; inline
// style is allowed because the browser's own text, image and media
// viewers use it.
const cspFile = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

// cspPDF is cspFile without sandbox: Chromium refuses to start its PDF
// viewer in a sandboxed document (no sandbox token re-enables it). Script
// stays forbidden (default-src 'none'); a PDF's own JavaScript runs, if at
// all, inside the browser's PDF viewer, never as a page of this origin.
const cspPDF = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; object-src 'self'"

// fileHeaders sets the headers every artifacts and uploads response
// carries, error answers included: no sniffing, and cspFile.
func fileHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", cspFile)
}

// textPlain is the type of every text file the route shows inline: the
// browser displays it as text whatever it contains.
const textPlain = "text/plain; charset=utf-8"

// inlineTypes maps a lower-case extension to the type it is served inline
// as. The list follows what DeerFlow's frontend previews: code and text
// files it fetches and renders itself (any type would do for those; text
// is the one a browser never runs), and the images, PDF, audio and video
// it shows in an iframe by URL. CSS is text/css so that an HTML artifact
// previewed in the frontend's sandboxed iframe can link a stylesheet next
// to it (with nosniff the browser applies no other type); a stylesheet
// cannot run script. JavaScript is not here: served as a script type it
// would run wherever a page of this origin included it.
var inlineTypes = func() map[string]string {
	m := map[string]string{
		"css": "text/css; charset=utf-8",

		"png": "image/png", "apng": "image/apng", "jpg": "image/jpeg", "jpeg": "image/jpeg",
		"gif": "image/gif", "webp": "image/webp", "avif": "image/avif", "bmp": "image/bmp",
		"ico": "image/x-icon",

		"pdf": "application/pdf",

		"mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "oga": "audio/ogg",
		"aac": "audio/aac", "m4a": "audio/mp4", "flac": "audio/flac",
		"mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
		"ogv": "video/ogg",
	}
	for _, ext := range strings.Fields(`
		txt text log csv tsv conf config cfg properties props diff patch
		md markdown mdx rst tex bib adoc
		json jsonc json5 jsonl ndjson yaml yml toml ini env
		jsx ts tsx mts cts scss sass less vue svelte astro
		py pyi pyw ipynb java kt kts scala groovy gradle c h cpp cc cxx hpp hxx hh cs go mod sum rs
		rb rake php pl lua r jl dart swift elm hs ex exs clj cljs erl zig v nim sql
		sh bash zsh fish ps1 bat
		dockerfile docker makefile cmake mk tf tfvars hcl proto prisma graphql gql
		gitignore gitattributes editorconfig`) {
		m[ext] = textPlain
	}
	return m
}()

// svgType is the type of SVG files. They are never inline (an SVG
// document runs its script), but they keep their type so that an <img>,
// which never runs an SVG's script, still shows them in the frontend's
// Markdown and HTML previews; a browser that opens one as a document is
// stopped by cspFile.
const svgType = "image/svg+xml"

// fileType is how the artifacts route serves a file named name: its
// Content-Type, and whether it may be shown inline. The type comes from
// the name alone: its last extension, compared without case, after
// trailing dots and spaces are stripped (Windows drops them, so
// "page.html." is page.html there). Unknown extensions, no extension and
// every active type are attachments of type application/octet-stream.
func fileType(name string) (contentType string, inline bool) {
	ext := fileExt(name)
	if t, ok := inlineTypes[ext]; ok {
		return t, true
	}
	if ext == "svg" {
		return svgType, false
	}
	return "application/octet-stream", false
}

// fileExt is the lower-case last extension of name without its dot, ""
// for none. A dotfile's name is its extension (".env" is "env"), as in
// DeerFlow's frontend.
func fileExt(name string) string {
	name = strings.TrimRight(name, ". ")
	ext := path.Ext(name)
	if ext == "" {
		// Names such as Makefile and Dockerfile are their own type.
		ext = "." + name
		if !wholeNameTypes[strings.ToLower(name)] {
			return ""
		}
	}
	return strings.ToLower(ext[1:])
}

// wholeNameTypes are extensionless names that DeerFlow's frontend shows
// as code.
var wholeNameTypes = map[string]bool{"makefile": true, "dockerfile": true}
