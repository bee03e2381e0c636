package search

import (
	"testing"

	"github.com/antlerhq/antler/tool"
)

func TestScanLocators(t *testing.T) {
	type roles struct{ path, write, read bool }
	tests := []struct {
		name, query string
		want        roles
	}{
		{"no path", "save the report as markdown", roles{}},
		{"save to a path", "Save it as Markdown to /root/markdown/out.md.", roles{true, true, false}},
		{"inflected verb", "the table, saved at ./data/air.csv", roles{true, true, false}},
		{"irregular form", "the summary I wrote to ~/notes/summary.txt", roles{true, true, false}},
		{"-ing form, e dropped", "Saving the chart under /root/figs/sale.png", roles{true, true, false}},
		{"-ing form, consonant doubled", "putting it in /root/out.md", roles{true, true, false}},
		{"read a path", "Read the sales data under /root/excel/sales.xlsx", roles{true, false, true}},
		{"one of each, nearest verb first", "Read /a/sales.xlsx, plot it as a bar chart and save it in /b/sale.png", roles{true, true, true}},
		{"no governing verb", "Give me a markdown report on /root/report.md", roles{true, false, false}},
		{"a verb of another sentence", "Write a poem. The notes are in ~/notes/today.txt", roles{true, false, false}},
		{"a verb too far away", "write one two three four five six seven eight nine ten eleven twelve thirteen /x/y.md", roles{true, false, false}},
		{"the verb before an earlier path", "save /a/one.md and /b/two.md", roles{true, true, false}},
		{"no verb: a destination", "Translate the poem into /root/fr/poem.txt", roles{true, true, false}},
		{"no verb: a source", "the errors from /var/log/app.log, counted by day", roles{true, false, true}},
		{"a verb wins over the preposition", "read the rows to /root/x.csv", roles{true, false, true}},
		{"other prepositions say nothing", "a markdown report on /root/report.md", roles{true, false, false}},
		{"a quoted path", "save it as `/root/out.md`", roles{true, true, false}},
		{"a bracketed path", "the notes (./notes.txt) to read", roles{true, false, false}},
		{"a quoted home path", `write it to "~/out.txt"`, roles{true, true, false}},
		{"a bare file name", "Save the results to results.csv.", roles{true, true, false}},
		{"a relative path", "load data/sales.xlsx and plot it", roles{true, false, true}},
		{"a quoted file name", "write it to 'notes.md'", roles{true, true, false}},
		{"a domain is no file", "save it to example.com", roles{false, false, false}},
		{"a version is no file", "write v1.2 release notes", roles{false, false, false}},
		{"a web address is no file", "read https://example.com/a.html", roles{false, false, false}},
		{"an abbreviation is no file", "save e.g. the totals", roles{false, false, false}},
		{"a library is no file", "write a Node.js server", roles{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := scanLocators(tt.query)
			if got := (roles{l.path, l.write, l.read}); got != tt.want {
				t.Errorf("scanLocators(%q) = %+v, want %+v", tt.query, got, tt.want)
			}
		})
	}
}

// TestPathRoleRanking checks that a path a verb writes or reads ranks
// first the tool that writes or reads files, which a term "file" alone
// does not: the query's other words match other tools better.
func TestPathRoleRanking(t *testing.T) {
	tools := []*tool.Tool{
		testTool("fs", "fs_write_file", "Create a new file or overwrite an existing one with new content."),
		testTool("fs", "fs_read_file", "Return the complete contents of a file from the file system."),
		testTool("notes", "notes_write_note", "Create or update a markdown note in the knowledge base."),
		testTool("web", "web_fetch_markdown", "Fetch a web page and return it as markdown."),
		testTool("mindmap", "mindmap_from_markdown", "Convert markdown content into a mind map file."),
		testTool("text", "text_get_lines", "Get a range of lines of a text document."),
		testTool("text", "text_count_words", "Count the words of a text."),
	}
	tests := []struct {
		name, query, want string
	}{
		{"written path", "Summarize the paper and store the summary in /root/out/paper.md", "fs_write_file"},
		{"read path", "Load /root/txt/todo.txt and count its words", "fs_read_file"},
	}
	for _, tt := range tests {
		for _, weight := range []float64{0, pathRoleWeight} {
			ix, err := BuildWith(tools, Options{Params: map[string]float64{"weight.path_role": weight}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := ix.Search(tt.query, 3)
			first := len(got) > 0 && got[0].Name == tt.want
			if on := weight > 0; first != on {
				t.Errorf("%s: weight.path_role %g: %s first = %v, want %v (got %v)", tt.name, weight, tt.want, first, on, names(got))
			}
		}
	}
}

func names(ts []*tool.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestScanLocators_url(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		{"summarize https://example.com/post", true},
		{"run a reconnaissance on www.example.com.", true},
		{"what is new on WWW.EXAMPLE.ORG", true},
		{"the page (www.example.com) in short", true},
		{"save it to /root/x.md", false},
		{"the world wide web", false},
		{"www", false},
	}
	for _, tt := range tests {
		if got := scanLocators(tt.query).url; got != tt.want {
			t.Errorf("scanLocators(%q).url = %v, want %v", tt.query, got, tt.want)
		}
	}
}

// FuzzScanLocators checks that a role needs a path.
func FuzzScanLocators(f *testing.F) {
	for _, s := range []string{"save it to /root/x.md.", "Read /a.xlsx, plot it and save it in /b.png", "./x", "~/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l := scanLocators(s); !l.path && (l.write || l.read) {
			t.Errorf("scanLocators(%q) = %+v: a role without a path", s, l)
		}
	})
}
