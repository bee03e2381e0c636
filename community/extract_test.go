package community

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExtractHTMLArticle(t *testing.T) {
	f, err := os.Open("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, _ := url.Parse("https://notes.example/2026/deer/index.html")
	p, err := ExtractHTML(f, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", p.Document())
	if !strings.Contains(p.Title, "Migration of Antlered Deer") {
		t.Errorf("title = %q", p.Title)
	}
	for _, want := range []string{
		"## Why they move",
		"**forest edge**",
		"[snowfall study](https://notes.example/studies/snowfall)",
		"- Food availability",
		"traditional wintering grounds",
	} {
		if !strings.Contains(p.Markdown, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, junk := range []string{"premium binoculars", "window.tracker", "Ten fern facts"} {
		if strings.Contains(p.Markdown, junk) {
			t.Errorf("markdown keeps boilerplate %q", junk)
		}
	}
}

func TestExtractHTMLEmpty(t *testing.T) {
	for _, doc := range []string{"", "<html><body></body></html>", "<script>x()</script>"} {
		p, err := ExtractHTML(strings.NewReader(doc), nil)
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if p.Title != "Untitled" || p.Markdown != noContent {
			t.Errorf("%q: got %+v", doc, p)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"鹿鹿鹿鹿", 2, "鹿鹿", true},
		{"abc", 0, "abc", false},
	}
	for _, tt := range tests {
		got, cut := truncateRunes(tt.s, tt.n)
		if got != tt.want || cut != tt.cut {
			t.Errorf("truncateRunes(%q, %d) = %q, %v; want %q, %v", tt.s, tt.n, got, cut, tt.want, tt.cut)
		}
	}
}

func FuzzExtractHTML(f *testing.F) {
	for _, s := range []string{
		"<html><head><title>t</title></head><body><p>hello <a href='x'>link</a></p></body></html>",
		"<article><h1>A</h1><table><tr><td>1</td></tr></table><pre><code>x</code></pre></article>",
		"<p>unterminated <b><i>nesting",
		"\xff\xfe<p>\x00</p>",
		"<ul><li><ol><li>deep</li></ol></li></ul><img src='javascript:alert(1)'>",
	} {
		f.Add(s)
	}
	u, _ := url.Parse("https://example.com/dir/page")
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := ExtractHTML(strings.NewReader(doc), u)
		if err != nil {
			return
		}
		if p.Title == "" || p.Markdown == "" {
			t.Fatalf("empty title or markdown: %+v", p)
		}
		if !utf8.ValidString(p.Markdown) {
			t.Fatalf("markdown is not valid UTF-8: %q", p.Markdown)
		}
	})
}
