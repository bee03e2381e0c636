package community

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// noContent is DeerFlow's text for a page with nothing readable.
const noContent = "No content could be extracted from this page"

// Page is the readable form of a fetched document.
type Page struct {
	// Title is the article title, "Untitled" when the page has none.
	Title string
	// Markdown is the article body as markdown.
	Markdown string
}

// Document renders the page as web_fetch returns it: "# {title}\n\n" and
// the markdown, as DeerFlow's readability extractor does.
func (p Page) Document() string {
	return "# " + p.Title + "\n\n" + p.Markdown
}

// ExtractHTML finds the readable article in an HTML document (UTF-8) with
// go-readability, a port of Mozilla's Readability.js, and converts it to
// markdown with html-to-markdown. Relative links are resolved against
// pageURL (nil leaves them relative). When readability finds no article,
// the whole body is converted instead; when that is empty too, Markdown is
// DeerFlow's "No content could be extracted from this page".
func ExtractHTML(r io.Reader, pageURL *url.URL) (Page, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return Page{}, fmt.Errorf("parse HTML: %w", err)
	}
	var p Page
	parser := readability.NewParser()
	article, rerr := parser.ParseDocument(doc, pageURL)
	node := article.Node
	if rerr == nil {
		p.Title = article.Title()
	}
	if node == nil || strings.TrimSpace(textOf(node)) == "" {
		node = findElement(doc, atom.Body)
	}
	if p.Title == "" {
		if t := findElement(doc, atom.Title); t != nil {
			p.Title = textOf(t)
		}
	}
	p.Title = strings.Join(strings.Fields(p.Title), " ")
	if p.Title == "" {
		p.Title = "Untitled"
	}
	if node != nil {
		opts := []converter.ConvertOptionFunc{}
		if pageURL != nil {
			opts = append(opts, converter.WithDomain(pageURL.String()))
		}
		md, err := htmltomarkdown.ConvertNode(node, opts...)
		if err != nil {
			return Page{}, fmt.Errorf("convert to markdown: %w", err)
		}
		p.Markdown = strings.TrimSpace(string(bytes.ToValidUTF8(md, []byte("\uFFFD"))))
	}
	if p.Markdown == "" {
		p.Markdown = noContent
	}
	return p, nil
}

func findElement(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, a); f != nil {
			return f
		}
	}
	return nil
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// truncateRunes cuts s to at most n characters (code points, as Python's
// slicing counts) and reports whether it cut. n <= 0 means no limit.
func truncateRunes(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}
