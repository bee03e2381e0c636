package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func TestRepeatsLast(t *testing.T) {
	mcpTool := func(server, name, desc string) *tool.Tool {
		tt := testTool(server, server+"_"+name, desc)
		tt.Meta[mcpToolKey] = name
		return tt
	}
	tools := []*tool.Tool{
		mcpTool("fs", "write_file", "Write a file."),
		mcpTool("commander", "write_file", "Write a file, or append to one."),
		mcpTool("notes", "write_note", "Write a note."),
		testTool("", "local_write_file", "Write a file in the sandbox."),
	}
	tests := []struct {
		name, query string
		limit       int
		off         bool
		want        []string
	}{
		{"the repeat gives way", "write the file", 3, false,
			[]string{"fs_write_file", "local_write_file", "notes_write_note"}},
		{"the repeat gives way to a weaker match", "write the file", 2, false,
			[]string{"fs_write_file", "local_write_file"}},
		{"off", "write the file", 2, true,
			[]string{"fs_write_file", "commander_write_file"}},
		{"the repeat still fills the limit", "write the file", 4, false,
			[]string{"fs_write_file", "local_write_file", "notes_write_note", "commander_write_file"}},
		{"the first of a name may be any server's", "append to a file", 3, false,
			[]string{"commander_write_file", "local_write_file", "fs_write_file"}},
		{"a server the query names keeps its place", "write the file with commander", 2, false,
			[]string{"commander_write_file", "local_write_file"}},
		{"a server the query names keeps its place, second", "write the file to fs or commander", 2, false,
			[]string{"fs_write_file", "commander_write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{}
			if tt.off {
				o.Params = map[string]float64{"repeats_last": 0}
			}
			ix, err := BuildWith(tools, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(ix.Search(tt.query, tt.limit))); diff != "" {
				t.Errorf("Search(%q, %d) (-want +got):\n%s", tt.query, tt.limit, diff)
			}
		})
	}
}

func TestRepeatedMCPNames(t *testing.T) {
	named := func(name string) *tool.Tool { return &tool.Tool{Meta: map[string]string{mcpToolKey: name}} }
	tests := []struct {
		name   string
		tools  []*tool.Tool
		server []int32
		want   bool
	}{
		{"no MCP names", []*tool.Tool{{Name: "a"}, {Name: "a"}}, []int32{-1, -1}, false},
		{"distinct names", []*tool.Tool{named("read"), named("write")}, []int32{0, 1}, false},
		{"one name on one server", []*tool.Tool{named("read"), named("read")}, []int32{0, 0}, false},
		{"one name on two servers", []*tool.Tool{named("read"), named("x"), named("read")}, []int32{0, 0, 1}, true},
	}
	for _, tt := range tests {
		if got := repeatedMCPNames(tt.tools, tt.server); got != tt.want {
			t.Errorf("%s: repeatedMCPNames = %v, want %v", tt.name, got, tt.want)
		}
	}
}
