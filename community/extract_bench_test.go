package community

import (
	"os"
	"strings"
	"testing"
)

func BenchmarkExtractHTML(b *testing.B) {
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		b.Fatal(err)
	}
	para := "<p>" + strings.Repeat("The herd walks on through the valley. ", 30) + "</p>\n"
	big := "<html><body><article>" + strings.Repeat(para, (1<<20)/len(para)) + "</article></body></html>"
	for _, bc := range []struct {
		name string
		doc  string
	}{{"article-2KiB", string(article)}, {"paragraphs-1MiB", big}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.doc)))
			for b.Loop() {
				if _, err := ExtractHTML(strings.NewReader(bc.doc), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
